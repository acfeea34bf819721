"""The multi-head attention reshape pipeline, with real numbers.

``reshape_stages`` lists every tensor shape from the input (B, T, C) to the output
projection; ``shape_flow_figure`` draws the list as a flow of boxes, one box per
tensor and one arrow per operation, as a teacher draws it on the board.
"""

from __future__ import annotations

from viz import spec, style

# Axis names of each shape, by its layout; C is d_model and D is d_head.
_DIMS = {
    "BTC": ("B", "T", "d_model"),
    "BTHD": ("B", "T", "H", "d_head"),
    "BHTD": ("B", "H", "T", "d_head"),
    "BHTT": ("B", "H", "T", "T"),
    "BHDD": ("B", "H", "d_head", "d_head"),
    "BHD": ("B", "H", "d_head"),
    "BHT": ("B", "H", "T"),
}


def _stage(step: str, op: str, shape: tuple[int, ...], note: str, dims: str) -> dict:
    return {
        "step": step,
        "op": op,
        "shape": tuple(int(s) for s in shape),
        "dims": _DIMS[dims],
        "note": note,
    }


def _softmax_stages(B: int, T: int, H: int, D: int, eps: float) -> tuple[list[dict], str]:
    """Softmax attention's mixing stages and its ``mix values`` formula."""
    stages = [
        _stage(
            "scores",
            "Q Kᵀ / √d_head",
            (B, H, T, T),
            f"one score per (query, key) pair: {T} × {T}",
            "BHTT",
        ),
        _stage(
            "weights",
            "mask + softmax(-1)",
            (B, H, T, T),
            "future keys → −∞; rows sum to 1",
            "BHTT",
        ),
    ]
    return stages, "weights · V"


def _linear_stages(B: int, T: int, H: int, D: int, eps: float) -> tuple[list[dict], str]:
    """Linear attention's mixing stages (Katharopoulos et al. 2020) and its formula, with
    the normalizer's epsilon ``eps`` written out."""
    stages = [
        _stage(
            "feature map",
            "φ(Q), φ(K), φ(x) = elu(x) + 1",
            (B, H, T, D),
            "positive features",
            "BHTD",
        ),
        _stage(
            "state",
            "S_i = sum over j ≤ i of φ(k_j) v_jᵀ",
            (B, H, D, D),
            f"running {D} × {D} summary per head, no {T} × {T} matrix",
            "BHDD",
        ),
        _stage(
            "normalizer",
            "z_i = sum over j ≤ i of φ(k_j)",
            (B, H, D),
            f"output divided by φ(q_i)ᵀ z_i + ε, ε = {eps:g}",
            "BHD",
        ),
    ]
    return stages, f"φ(q_i)ᵀ S_i / (φ(q_i)ᵀ z_i + ε), ε = {eps:g}"


def _delta_stages(B: int, T: int, H: int, D: int, eps: float) -> tuple[list[dict], str]:
    """DeltaNet's mixing stages (Yang et al. 2024; ``models/delta.py``): the convolved,
    SiLU'd, L2-normalised q and k, the write strength beta and the delta-rule state."""
    stages = [
        _stage(
            "conv + norm",
            "q, k = L2(SiLU(conv₄(·))), v = conv₄(·)",
            (B, H, T, D),
            "width-4 causal convolution; unit-length q, k",
            "BHTD",
        ),
        _stage("beta", "β_t = sigmoid(W_β x_t)", (B, H, T), "write strength per head", "BHT"),
        _stage(
            "state",
            "S_t = S_(t−1) + β_t k_t (v_t − S_(t−1)ᵀ k_t)ᵀ",
            (B, H, D, D),
            f"erase, then write: a {D} × {D} state per head",
            "BHDD",
        ),
    ]
    return stages, "S_tᵀ q_t"


# Attention kind -> the stages between "heads first" and "mix values", and the mix formula.
_MIXING_STAGES = {"softmax": _softmax_stages, "linear": _linear_stages, "delta": _delta_stages}


def reshape_stages(
    B: int,
    T: int,
    C: int,
    H: int,
    D: int | None = None,
    attention: str = "softmax",
    eps: float = 1e-6,
    layer: int | None = None,
) -> list[dict]:
    """Shapes through one multi-head attention layer.

    Args:
        B: batch size, T: tokens, C: d_model, H: heads, D: d_head (default C // H).
        attention: ``"softmax"`` (T x T score matrix) or ``"linear"`` (feature map
            phi(x) = elu(x) + 1 and a (D, D) state per head instead of T x T).
        eps: linear attention's normalizer epsilon (the model's ``cfg.attn_eps``), shown in
            its formulas.
        layer: the layer shown, named in the input stage (its input x is the
            LayerNorm'd residual stream entering that layer; only layer 0's residual
            stream is the token + position embedding).

    Returns:
        Ordered list of dicts ``{"step", "op", "shape", "dims", "note"}``; ``shape`` is a
        tuple of ints, e.g. ``(B, H, T, D)`` with real numbers substituted, and ``dims``
        names its axes (``("B", "H", "T", "d_head")``).

    Raises:
        ValueError: for a non-positive size, ``H * D != C`` or an unknown attention kind.
    """
    if D is None:
        D = C // H if H > 0 else 0
    for name, val in (("B", B), ("T", T), ("C", C), ("H", H), ("D", D)):
        if int(val) < 1:
            raise ValueError(f"{name} must be >= 1, got {val}")
    if H * D != C:
        raise ValueError(f"H * D must equal C, got {H} * {D} != {C}")
    if attention not in _MIXING_STAGES:
        raise ValueError(f"unknown attention kind {attention!r}")

    where = "this layer" if layer is None else f"layer {layer}"
    stages = [
        _stage(
            "input",
            f"x = LayerNorm(residual stream entering {where})",
            (B, T, C),
            "B sentences, T tokens, d_model numbers each; layer 0's residual stream is "
            "the token + position embedding",
            "BTC",
        ),
        _stage(
            "project",
            "Q, K, V = x W_Q, x W_K, x W_V",
            (B, T, C),
            "three Linear(d_model, d_model) layers",
            "BTC",
        ),
        _stage(
            "split heads",
            "view(B, T, H, d_head)",
            (B, T, H, D),
            f"d_model = H × d_head = {H} × {D}",
            "BTHD",
        ),
        _stage(
            "heads first", "transpose(1, 2)", (B, H, T, D), "each head sees all T tokens", "BHTD"
        ),
    ]
    mixing, mix = _MIXING_STAGES[attention](B, T, H, D, eps)
    stages += mixing
    stages += [
        _stage("mix values", mix, (B, H, T, D), "per-head output (head_out)", "BHTD"),
        _stage(
            "merge heads",
            "transpose(1, 2).reshape(B, T, d_model)",
            (B, T, C),
            # short: a longer note ran past the figure's edge at 1280 px
            "concatenate heads (not contiguous: .view fails)",
            "BTC",
        ),
        _stage("output", "· W_O", (B, T, C), "Linear(d_model, d_model) mixes the heads", "BTC"),
    ]
    return stages


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


def _box(text: str, y: float) -> dict:
    """A box that sizes itself to its text (an annotation with a border)."""
    return {
        "text": text,
        "x": _X,
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


def _arrow(op: str, note: str, y_from: float, y_to: float) -> list[dict]:
    """An arrow down from ``y_from`` to ``y_to`` and its label: the operation, then the
    note in grey."""
    arrow = {
        "text": "",
        "x": _X,
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
    label = {
        "text": f"{style.escape(op)}  <span style='color:#6b7280'>{style.escape(note)}</span>",
        "x": _X,
        "xshift": _SPINE_PX + 14,
        "y": (y_from + y_to) / 2,
        "xref": "paper",
        "yref": "y",
        "xanchor": "left",
        "showarrow": False,
        "font": {"size": style.TICK_SIZE},
    }
    return [arrow, label]


def shape_flow_figure(stages: list[dict], title: str = "Multi-head reshape") -> spec.Spec:
    """The stages as a flow of boxes: each box a tensor with its shape in symbols and in
    this model's numbers (``(B, T, d_model) = (1, 17, 64)``), each arrow the operation
    that makes the next tensor, with its note.

    Every box sizes itself to its text and the figure is ``STAGE_PX`` pixels a stage
    tall, so nothing is cut off, however many stages there are.

    Args:
        stages: output of ``reshape_stages``.

    Returns:
        Spec with no traces: one annotation per box, two per arrow (arrow, label).
    """
    n = len(stages)
    annotations = []
    for i, s in enumerate(stages):
        dims = "(" + ", ".join(s["dims"]) + ")"
        name = style.escape(TENSORS.get(s["step"], s["step"]))
        if s["step"] == "input":
            name += " = LayerNorm'd residual stream"
        text = f"<b>{name}</b>   {dims} = {format_shape(s['shape'])}"
        if "value" in s:  # one token's number at this stage (``viz.block``)
            text += f"   <span style='color:#b45309'><b>{style.escape(s['value'])}</b></span>"
        annotations.append(_box(text, -i))
        if i + 1 < n:
            nxt = stages[i + 1]
            annotations += _arrow(nxt["op"], nxt["note"], -i - 0.3, -i - 0.7)
    hidden = {"visible": False, "fixedrange": True}
    layout = {
        "annotations": annotations,
        "xaxis": {**hidden, "range": [0.0, 1.0]},
        "yaxis": {**hidden, "range": [-(n - 0.5), 0.5]},
        "margin": {"t": _TOP, "b": _BOTTOM, "l": 24, "r": 24},
        "showlegend": False,
    }
    return spec.figure([], layout, title=title, height=_TOP + _BOTTOM + STAGE_PX * n)
