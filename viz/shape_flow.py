"""The reshape pipeline drawn as a teacher draws it on the board: one box per tensor
(its name, axes and shape) and one arrow per operation, from ``viz.shapes.reshape_stages``
or ``viz.block.block_stages``."""

from __future__ import annotations

from viz import spec, style


def format_shape(shape: tuple[int, ...]) -> str:
    """``(1, 8, 4, 16)`` -> ``"(1, 8, 4, 16)"`` (always with parentheses)."""
    return "(" + ", ".join(str(s) for s in shape) + ")"


STAGE_PX = 74  # vertical pixels per stage: a one-line box and the arrow into the next
_TOP, _BOTTOM = 90, 30  # margins (px): title above, nothing below
_X = 0.0  # paper x of the boxes' left edges
_SPINE_PX = 36  # the arrows run this many px right of the boxes' left edges
TENSORS = {  # step -> the tensor it makes, as its box names it
    "input": "x",
    "project": "Q, K, V",
    "split heads": "Q, K, V",
    "heads first": "Q, K, V per head",
    "scores": "scores",
    "weights": "attention weights",
    "feature map": "φ(Q), φ(K)",
    "state": "state S_i",
    "normalizer": "normalizer z_i",
    "mix values": "head_out",
    "merge heads": "heads merged",
    "output": "attention output",
}


def _box(text: str, y: float, x: float = _X) -> dict:
    """A box that sizes itself to its text (an annotation with a border), its left edge
    at paper ``x``."""
    return {
        "text": text,
        "x": x,
        "y": y,
        "xref": "paper",
        "yref": "y",
        "xanchor": "left",
        "showarrow": False,
        "font": {"size": style.FONT_SIZE},
        "bgcolor": "#dbe9f6",
        "bordercolor": "#1d4ed8",
        "borderwidth": 2,
        "borderpad": 6,
    }


def _arrow(op: str, note: str, y_from: float, y_to: float, x: float = _X) -> list[dict]:
    """An arrow down from ``y_from`` to ``y_to`` and its label: the operation, then the
    note in grey (none for an empty note)."""
    arrow = {
        "text": "",
        "x": x,
        "xshift": _SPINE_PX,
        "y": y_to,
        "xref": "paper",
        "yref": "y",
        "ax": 0,  # the tail: 0 px to the side (straight down) ...
        "axref": "pixel",
        "ay": y_from,  # ... from y_from, in data units
        "ayref": "y",
        "showarrow": True,
        "arrowhead": 2,
        "arrowsize": 1.2,
        "arrowwidth": 2,
        "arrowcolor": style.FONT_COLOR,
    }
    grey = f"  <span style='color:#6b7280'>{style.escape(note)}</span>" if note else ""
    label = {
        "text": f"{style.escape(op)}{grey}",
        "x": x,
        "xshift": _SPINE_PX + 14,
        "y": (y_from + y_to) / 2,
        "xref": "paper",
        "yref": "y",
        "xanchor": "left",
        "showarrow": False,
        "font": {"size": style.TICK_SIZE},
    }
    return [arrow, label]


def shape_flow_figure(
    stages: list[dict], title: str = "Multi-head reshape", columns: int = 1
) -> spec.Spec:
    """The stages as a flow of boxes: each box a tensor with its shape in symbols and in
    this model's numbers (``(B, T, d_model) = (1, 17, 64)``), each arrow the operation
    that makes the next tensor, with its note.

    Every box sizes itself to its text and the figure is ``STAGE_PX`` pixels a stage
    tall, so nothing is cut off, however many stages there are.

    Args:
        stages: output of ``reshape_stages``.
        columns: 2 for a projector (presenter mode, #21): the flow in two columns, half
            as tall, each arrow with its operation only (the grey notes are the
            teacher's to say); the second column starts with the arrow into its first box.

    Returns:
        Spec with no traces: one annotation per box, two per arrow (arrow, label).
    """
    n = len(stages)
    rows = -(-n // columns)  # stages per column
    top = 0.5 if columns == 1 else 1.2  # room above the second column's first arrow
    annotations = []
    for i, s in enumerate(stages):
        x, r = (i // rows) / columns, i % rows
        dims = "(" + ", ".join(s["dims"]) + ")"
        name = style.escape(TENSORS.get(s["step"], s["step"]))
        if s["step"] == "input" and columns == 1:
            name += f" = {s.get('norm', 'LayerNorm')}'d residual stream"
        text = f"<b>{name}</b>   {dims} = {format_shape(s['shape'])}"
        if "value" in s:  # one token's number at this stage (``viz.block``)
            text += f"   <span style='color:#b45309'><b>{style.escape(s['value'])}</b></span>"
        annotations.append(_box(text, -r, x))
        if i + 1 < n:
            nxt = stages[i + 1]
            note = nxt["note"] if columns == 1 else ""
            if (i + 1) % rows:  # down to the next box of this column
                annotations += _arrow(nxt["op"], note, -r - 0.3, -r - 0.7, x)
            else:  # into the first box of the next column, from above it
                annotations += _arrow(nxt["op"], note, 0.9, 0.3, (i + 1) // rows / columns)
    hidden = {"visible": False, "fixedrange": True}
    layout = {
        "annotations": annotations,
        "xaxis": {**hidden, "range": [0.0, 1.0]},
        "yaxis": {**hidden, "range": [-(rows - 0.5), top]},
        "margin": {"t": _TOP, "b": _BOTTOM, "l": 24, "r": 24},
        "showlegend": False,
    }
    height = _TOP + _BOTTOM + round(STAGE_PX * (rows - 0.5 + top))
    return spec.figure([], layout, title=title, height=height)
