"""Plotly figures for per-head tensors and predictions: Q/K/V, the state S_i, the
normalizer z_i, the output y_i and the top-k next tokens.

Pure functions: arrays in, ``go.Figure`` out; labels are HTML-escaped (user text).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from viz import style
from viz.attention import _heat, _heatmap_axes, _labels  # shared heatmap helpers


def matrix_heatmap(
    matrix: object,
    row_labels: Sequence[object] | None,
    col_labels: Sequence[object] | None,
    title: str,
    x_title: str,
    y_title: str,
    diverging: bool = True,
) -> go.Figure:
    """Generic heatmap of a 2-D matrix (Q/K/V of a head (T, D), state S_i (D, D), W_Q W_Kᵀ ...).

    Args:
        matrix: (R, K) array.
        row_labels, col_labels: R / K labels (escaped; position-prefixed if they repeat),
            or None for ``0..R-1`` / ``0..K-1``.
        diverging: True -> ``style.DIVERGING`` centred at 0 with symmetric true range
            ``±max|x|``; False -> ``style.SEQUENTIAL`` over the data min..max.

    Raises:
        ValueError: if matrix is not 2-D or label counts do not match.
    """
    m = np.asarray(matrix, dtype=float)
    if m.ndim != 2:
        raise ValueError(f"matrix must be 2-D, got shape {m.shape}")
    rows = _labels(row_labels, m.shape[0], "")
    cols = _labels(col_labels, m.shape[1], "")
    if diverging:
        lo, hi = style.symmetric_range(m)
        extra = {"zmid": 0.0, "colorscale": style.DIVERGING}
    else:
        finite = m[np.isfinite(m)]
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        extra = {"colorscale": style.SEQUENTIAL}
    hover = f"{style.escape(y_title)}: %{{y}}<br>{style.escape(x_title)}: %{{x}}<br>"
    cbar = {"title": {"text": "value"}}
    trace = _heat(m, cols, rows, zmin=lo, zmax=hi, colorbar=cbar, **extra)
    trace.hovertemplate = hover + "value: %{z:.3f}<extra></extra>"
    fig = go.Figure(trace)
    _heatmap_axes(fig)
    fig.update_layout(xaxis_title=x_title, yaxis_title=y_title)
    return style.apply_layout(fig, title=title)


def vector_bar(
    values: object, labels: Sequence[object] | None = None, title: str = ""
) -> go.Figure:
    """Bar chart of a vector (normalizer z_i, output y_i, ...): (D,) values.

    Positive bars are red, negative blue (same convention as the diverging heatmaps).

    Raises:
        ValueError: if labels do not match the vector length.
    """
    v = np.asarray(values, dtype=float).reshape(-1)
    x = _labels(labels, v.shape[0], "d")
    colors = ["#b2182b" if val >= 0 else "#2166ac" for val in v]
    fig = go.Figure(
        go.Bar(x=x, y=v, marker_color=colors, hovertemplate="%{x}: %{y:.3f}<extra></extra>")
    )
    fig.update_xaxes(title_text="dimension", type="category")
    fig.update_yaxes(title_text="value", zeroline=True)
    return style.apply_layout(fig, title=title)


def topk_bars(probs: object, labels: Sequence[object], title: str = "", k: int = 10) -> go.Figure:
    """Horizontal bars of the k most likely next tokens, most likely on top.

    Args:
        probs: (V,) probabilities (full distribution or already top-k).
        labels: V token strings (escaped; position-prefixed if they repeat).
        k: how many bars (at most V).

    Raises:
        ValueError: if ``len(labels) != V`` or k < 1.
    """
    p = np.asarray(probs, dtype=float).reshape(-1)
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    names = _labels(labels, p.shape[0], "")
    order = np.argsort(-p, kind="stable")[:k]
    fig = go.Figure(
        go.Bar(
            x=p[order],
            y=[names[i] for i in order],
            orientation="h",
            marker_color=style.BAR_COLOR,
            text=[f"{p[i]:.1%}" for i in order],
            textposition="outside",
            hovertemplate="token: %{y}<br>probability: %{x:.3f}<extra></extra>",
        )
    )
    fig.update_yaxes(autorange="reversed", type="category", title_text="next token")
    fig.update_xaxes(range=[0.0, 1.15], title_text="probability")
    return style.apply_layout(fig, title=title, height=max(300, 40 * len(order) + 160))
