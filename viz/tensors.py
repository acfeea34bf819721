"""Plotly figures for per-head tensors and predictions: Q/K/V, the state S_i, the
normalizer z_i, the output y_i and the top-k next tokens.

Pure functions: arrays in, a plain plotly spec out (``viz.spec``); labels are
HTML-escaped (user text).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from viz import fit, spec, style
from viz.heat import axis_labels, heat_trace, numeric

_BAR_UNDER = {"orientation": "h", "yref": "container", "y": 0.0, "yanchor": "bottom",
              "thickness": 10, "len": 0.9}  # fmt: skip


def matrix_heatmap(
    matrix: object,
    row_labels: Sequence[object] | None,
    col_labels: Sequence[object] | None,
    title: str,
    x_title: str,
    y_title: str,
    diverging: bool = True,
) -> spec.Spec:
    """Generic heatmap of a 2-D matrix (Q/K/V of a head (T, D), state S_i (D, D), W_Q W_Kᵀ ...).

    Args:
        matrix: (R, K) array.
        row_labels, col_labels: R / K labels (escaped; position-prefixed if they repeat),
            or None for ``0..R-1`` / ``0..K-1``.
        diverging: True -> ``style.DIVERGING`` centred at 0 with symmetric true range
            ``±max|x|``; False -> ``style.SEQUENTIAL`` over the data min..max.

    Plotly's default height (450 px) up to 145 rows, then 2 px a row up to 900 px
    (``viz.fit.matrix_height``) with every k-th row labelled; columns (d_head) thinned
    the same way when they outnumber the labels a full-width plot can hold.

    Raises:
        ValueError: if matrix is not 2-D or label counts do not match.
    """
    m = numeric(matrix)
    if m.ndim != 2:
        raise ValueError(f"matrix must be 2-D, got shape {m.shape}")
    rows = axis_labels(row_labels, m.shape[0], "")
    cols = axis_labels(col_labels, m.shape[1], "")
    if diverging:
        lo, hi = style.symmetric_range(m)
        extra = {"zmid": 0.0, "colorscale": style.DIVERGING}
    else:
        finite = m[np.isfinite(m)]
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        extra = {"colorscale": style.SEQUENTIAL}
    hover = f"{style.escape(y_title)}: %{{y}}<br>{style.escape(x_title)}: %{{x}}<br>"
    cbar = {"title": {"text": "value"}}
    trace = heat_trace(m, cols, rows, zmin=lo, zmax=hi, colorbar=cbar, **extra)
    trace["hovertemplate"] = hover + "value: %{z:.3f}<extra></extra>"
    height = fit.matrix_height(m.shape[0])  # None: plotly's default, its labels every 19 px
    if row_labels is not None and m.shape[0] <= fit.MAX_LABELLED:  # every token labelled
        need = fit.axis_px_for(m.shape[0]) + style.MARGIN["t"] + style.MARGIN["b"]
        height = max(height or fit.DEFAULT_HEIGHT_PX, need)
        rows = fit.every_label(rows, height - style.MARGIN["t"] - style.MARGIN["b"])
    else:
        rows = fit.label_ticks(m.shape[0], height - fit.MARGINS_PX) if height else {}
    x, y = spec.heat_axes(**spec.titled(x_title), **fit.label_ticks(m.shape[1], fit.WIDE_PX))
    y = {**y, **spec.titled(y_title), **rows}
    fig = spec.figure([trace], {"xaxis": x, "yaxis": y}, title=title, height=height)
    if m.shape[0] != m.shape[1]:
        return fig
    # a state (D, D): square cells (#44 item 2), its colour bar under it, not beside (in a
    # third of the page the bar and its title took half the width: cells of 2x9 px)
    trace["colorbar"] = {**cbar, **_BAR_UNDER, "title": {"text": "value", "side": "bottom"}}
    fig["layout"]["margin"] = {**fig["layout"]["margin"], "l": 60, "r": 10, "b": 150}
    return spec.square_cells(fig)


def vector_bar(
    values: object, labels: Sequence[object] | None = None, title: str = ""
) -> spec.Spec:
    """Bar chart of a vector (normalizer z_i, output y_i, ...): (D,) values.

    Positive bars are red, negative blue (same convention as the diverging heatmaps).

    Raises:
        ValueError: if labels do not match the vector length.
    """
    v = numeric(values).reshape(-1)
    x = axis_labels(labels, v.shape[0], "d")
    colors = ["#b2182b" if val >= 0 else "#2166ac" for val in v]
    trace = {
        "type": "bar",
        "x": x,
        "y": v,
        "marker": {"color": colors},
        "hovertemplate": "%{x}: %{y:.3f}<extra></extra>",
    }
    layout = {
        "xaxis": {**spec.titled("dimension"), "type": "category"},
        "yaxis": {**spec.titled("value"), "zeroline": True},
    }
    return spec.figure([trace], layout, title=title)


def topk_bars(probs: object, labels: Sequence[object], title: str = "", k: int = 10) -> spec.Spec:
    """Horizontal bars of the k most likely next tokens, most likely on top.

    Args:
        probs: (V,) probabilities (full distribution or already top-k).
        labels: V token strings (escaped; id-prefixed if two of the k shown repeat).
        k: how many bars (at most V).

    Raises:
        ValueError: if ``len(labels) != V`` or k < 1.
    """
    p = numeric(probs).reshape(-1)
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if len(labels) != p.shape[0]:
        raise ValueError(f"expected {p.shape[0]} labels, got {len(labels)}")
    order = np.argsort(-p, kind="stable")[:k]
    # As labels, for the k shown only (V can be 262,144): escaping is one-to-one, so the
    # bars' labels repeat after escaping exactly when their strings repeat.
    unique = len({str(labels[i]) for i in order}) == len(order)
    names = [style.escape(labels[i]) if unique else f"{i}·{style.escape(labels[i])}" for i in order]
    trace = {
        "type": "bar",
        "x": p[order],
        "y": names,
        "orientation": "h",
        "marker": {"color": style.BAR_COLOR},
        "text": [f"{p[i]:.1%}" for i in order],
        "textposition": "outside",
        "hovertemplate": "token: %{y}<br>probability: %{x:.3f}<extra></extra>",
    }
    layout = {
        "yaxis": {"autorange": "reversed", "type": "category", **spec.titled("next token")},
        "xaxis": {"range": [0.0, 1.15], **spec.titled("probability")},
    }
    return spec.figure([trace], layout, title=title, height=max(300, 40 * len(order) + 160))
