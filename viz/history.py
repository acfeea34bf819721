"""Figures of the training history (issue #46): the measures of every kept checkpoint
against the training step, each model a colour, its phase change marked.

Pure functions: numbers in, a plain plotly spec out (``viz.spec``). The step axis is
logarithmic (the kept steps are log-spaced, and the phase change of Olsson et al. 2022 is
early); step 0, the initialisation, is drawn at step + 1 = 1, and every tick and hover
names the real step.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from viz import spec, style
from viz.forgetting import KIND_COLORS

# panel -> (x domain, y domain) in paper coordinates: a 2 x 2 grid
PANELS = (((0.0, 0.44), (0.64, 1.0)), ((0.56, 1.0), (0.64, 1.0)),
          ((0.0, 0.44), (0.0, 0.36)), ((0.56, 1.0), (0.0, 0.36)))  # fmt: skip
PREFIX_KEY = "best_prefix_matching"


def _x(steps: Sequence[int]) -> list[int]:
    """Plotted x of each step: step + 1 (a log axis has no 0)."""
    return [int(s) + 1 for s in steps]


def _ticks(steps: Sequence[int]) -> dict:
    """Tick marks at the kept decades and the last step, labelled by the real step."""
    last = max(steps)
    shown = sorted({s for s in (0, 10, 100, 1000) if 4 * s <= last or s == 0} | {last})
    return {"tickvals": _x(shown), "ticktext": [f"{s:,}" for s in shown]}


def history_curves(
    histories: Mapping[str, Mapping],
    curves: Mapping[str, tuple[str, str]],
    threshold: float,
    height: int = 640,
) -> spec.Spec:
    """The measures against the step: one panel per measure (at most four), one line per
    model; each model's phase change a dashed vertical line on every panel, labelled once,
    and the threshold a dashed horizontal line on the prefix-matching panel.

    Args:
        histories: model -> ``{"steps": [S], "curves": {key: [S]}, "phase_change_step":
            int | None}`` (``inference.history.ModelHistory`` fields).
        curves: key -> (panel title, unit), in panel order (``inference.history.CURVES``).
        threshold: the prefix-matching score that marks an induction head.
        height: the figure's height in px; two curves are drawn side by side in one row.

    Raises:
        ValueError: if a model's curve and steps differ in length.
    """
    data, layout, shapes, notes = [], {}, [], []
    for p, (key, (title, unit)) in enumerate(list(curves.items())[: len(PANELS)]):
        n = "" if p == 0 else str(p + 1)
        (x0, x1), (y0, y1) = PANELS[p] if len(curves) > 2 else (PANELS[p][0], (0.0, 0.78))
        steps = next(iter(histories.values()))["steps"]
        layout[f"xaxis{n}"] = {"type": "log", "domain": [x0, x1], "anchor": f"y{n}",
                               "tickangle": 0, **_ticks(steps),
                               **spec.titled("training step")}  # fmt: skip
        layout[f"yaxis{n}"] = {"domain": [y0, y1], "anchor": f"x{n}", **spec.titled(unit)}
        notes.append(spec.subplot_title(title, (x0 + x1) / 2, y1 + 0.01))
        for kind, h in histories.items():
            values = h["curves"][key]
            if len(values) != len(h["steps"]):
                raise ValueError(
                    f"{kind}: {len(values)} values of {key} for {len(h['steps'])} steps"
                )
            data.append({"type": "scatter", "mode": "lines+markers", "name": kind,
                         "legendgroup": kind, "showlegend": p == 0, "x": _x(h["steps"]),
                         "y": list(values), "customdata": list(h["steps"]),
                         "xaxis": f"x{n}", "yaxis": f"y{n}",
                         "line": {"color": KIND_COLORS.get(kind, "#7f7f7f"), "width": 3},
                         "hovertemplate": f"{kind}, step %{{customdata:,}}: %{{y:.3g}} {unit}"
                                          "<extra></extra>"})  # fmt: skip
            if (phase := h.get("phase_change_step")) is not None:
                shapes.append({"type": "line", "xref": f"x{n}", "yref": f"y{n} domain",
                               "x0": phase + 1, "x1": phase + 1, "y0": 0, "y1": 1,
                               "line": {"dash": "dash", "width": 2,
                                        "color": KIND_COLORS.get(kind, "#7f7f7f")}})  # fmt: skip
        if key == PREFIX_KEY:
            shapes.append({"type": "line", "xref": f"x{n} domain", "yref": f"y{n}", "x0": 0,
                           "x1": 1, "y0": threshold, "y1": threshold,
                           "line": {"dash": "dot", "width": 1.5, "color": "#444444"}})  # fmt: skip
    layout |= {"shapes": shapes, "annotations": notes + _phase_notes(histories),
               "legend": {"orientation": "h", "x": 0.5, "xanchor": "center",
                          "y": 1.12 if len(curves) > 2 else 0.9, "yanchor": "bottom"}}  # fmt: skip
    return spec.figure(data, layout, title=None, height=height)


def _phase_notes(histories: Mapping[str, Mapping]) -> list[dict]:
    """One label per phase change, on the first panel, at the top of its line."""
    notes = []
    for i, (kind, h) in enumerate(histories.items()):
        if (phase := h.get("phase_change_step")) is None:
            continue
        # an annotation on a log axis is placed in log10 units (a shape in data units)
        notes.append({"text": f"{style.escape(kind)}: induction head at step {phase:,}",
                      "x": math.log10(phase + 1), "xref": "x", "y": 1 - 0.1 * i,
                      "yref": "y domain", "bgcolor": "rgba(255, 255, 255, 0.85)",
                      "xanchor": "right", "showarrow": False,
                      "font": {"color": KIND_COLORS.get(kind, "#444444")}})  # fmt: skip
    return notes
