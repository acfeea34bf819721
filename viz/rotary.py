"""Figures of the positional view for a rotary model (RoPE): each dimension pair's
wavelength, and one query and one key's score against their offset.

Pure functions: arrays in, a plain plotly spec out (``viz.spec``); labels are escaped.
"""

from __future__ import annotations

import numpy as np

from viz import spec, style


def wavelength_bars(wavelengths: object, context: int) -> spec.Spec:
    """Tokens per full turn of each pair i (d_rot/2,), on a log axis, with the model's
    context length drawn: pairs whose turn is longer than the context never wrap."""
    w = np.asarray(wavelengths, dtype=float)  # (d_rot/2,)
    bars = {"type": "bar", "x": list(range(len(w))), "y": w, "marker": {"color": style.BAR_COLOR},
            "hovertemplate": "pair %{x}: %{y:.1f} tokens per turn<extra></extra>"}  # fmt: skip
    line = {"type": "line", "xref": "paper", "x0": 0, "x1": 1, "yref": "y", "y0": context,
            "y1": context, "line": {"color": style.HIGHLIGHT_COLOR, "dash": "dash", "width": 3}}  # fmt: skip
    layout = {"xaxis": {**spec.titled("dimension pair i (dims i and i + d_rot/2)"), "dtick": 1},
              "yaxis": {**spec.titled("tokens per full turn"), "type": "log", "dtick": 1},
              "shapes": [line],
              "annotations": [{"xref": "paper", "x": 1, "y": np.log10(context), "yref": "y",
                               "text": f"context {context}", "showarrow": False,
                               "xanchor": "right", "yanchor": "bottom"}]}  # fmt: skip
    return spec.figure([bars], layout, "How fast each pair turns: 2π / θᵢ tokens per turn", 420)


def offset_curve(offsets: object, scores: object, actual_offset: int, actual_score: float,
                 query: str, key: str) -> spec.Spec:  # fmt: skip
    """The score (n,) of one query content and one key content against their offset
    (n,), with the model's own score of the pair at its real offset marked."""
    curve = {"type": "scatter", "mode": "lines", "x": np.asarray(offsets), "y": np.asarray(scores),
             "name": "same contents, moved", "line": {"width": 3, "color": style.BAR_COLOR},
             "hovertemplate": "offset %{x}: score %{y:.3f}<extra></extra>"}  # fmt: skip
    mark = {"type": "scatter", "mode": "markers", "x": [actual_offset], "y": [actual_score],
            "name": "the model's score in your sentence",
            "marker": {"size": 16, "color": style.HIGHLIGHT_COLOR, "symbol": "diamond"},
            "hovertemplate": "offset %{x}: the model's score %{y:.3f}<extra></extra>"}  # fmt: skip
    title = f"q·k / √d of “{style.escape(query)}” and “{style.escape(key)}” by offset"
    layout = {"xaxis": spec.titled("offset: query position − key position (tokens)"),
              "yaxis": spec.titled("scaled score"),
              "legend": {"orientation": "h", "y": -0.25}}  # fmt: skip
    return spec.figure([curve, mark], layout, title, 460)
