"""Figures of the encoder-decoder lessons: alignment matrices, a decoding step, the
fixed context vector, accuracy against source length and Nadaraya-Watson regression.

Pure builders: arrays and word lists in, plotly figures out (no model code).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from viz import fit, spec, style
from viz.heat import axis_labels

HOVER_ALIGN = "output: %{y}<br>source: %{x}<br>weight: %{z:.3f}<extra></extra>"
KIND_NAMES = {
    "gru": "GRU, fixed context",
    "bahdanau": "GRU + Bahdanau attention",
    "transformer": "Transformer",
}


def alignment(
    weights: object,
    target: Sequence[str],
    source: Sequence[str],
    gold: Sequence[int] | None = None,
    title: str = "",
    width_px: int = fit.HALF_1280_PX,
) -> go.Figure:
    """The alignment matrix: rows are output words, columns source words, cell (t, j) the
    weight output t gave source word j. ``gold[t]`` (when given) is the source position
    output t translates: drawn as an open square on that cell. Every word labels its
    axis (``viz.fit.every_label``; ``width_px``: the plot's width at a 1280 px window).

    Raises:
        ValueError: when the labels do not match the (T, S) shape.
    """
    z = np.asarray(weights, dtype=float)  # (T, S)
    if z.ndim != 2:
        raise ValueError(f"alignment weights must be (T, S), got {z.shape}")
    y = axis_labels(list(target), z.shape[0], "t")
    x = axis_labels(list(source), z.shape[1], "s")
    fig = go.Figure(
        go.Heatmap(z=z, x=x, y=y, zmin=0, zmax=1, colorscale=style.SEQUENTIAL,
                   hovertemplate=HOVER_ALIGN, colorbar={"title": "weight"})
    )  # fmt: skip
    if gold is not None:
        rows = [t for t in range(min(len(gold), z.shape[0]))]
        fig.add_trace(
            go.Scatter(
                x=[x[gold[t]] for t in rows], y=[y[t] for t in rows], mode="markers",
                marker={"symbol": "square-open", "size": 22, "color": style.HIGHLIGHT_COLOR,
                        "line": {"width": 3}},
                name="gold alignment", hoverinfo="skip",
            )
        )  # fmt: skip
    style.apply_layout(fig, title, height=max(320, 34 * z.shape[0] + 160))
    if not title:  # no empty band above the matrix where a title would go
        fig.update_layout(margin={"t": 24})
    if width_px <= fit.HALF_1280_PX:  # beside another figure: the colour bar above it
        fig.update_traces(colorbar={"orientation": "h", "x": 0.5, "xanchor": "center", "y": 1.0,
                                    "yanchor": "bottom", "len": 0.8, "thickness": 12},
                          selector={"type": "heatmap"})  # fmt: skip
        fig.update_layout(margin={"t": 70 if not title else 140, "r": 20, "l": 40})
    fig.update_yaxes(autorange="reversed", title="output word",
                     **fit.every_label(y, 34 * z.shape[0]))  # fmt: skip
    fig.update_xaxes(**{"title": "source word", "tickangle": -45,
                        **fit.every_label(x, width_px, x=True)})  # fmt: skip
    fig.update_layout(legend={"orientation": "h", "y": -0.3})
    return spec.square_figure(fig)


def step_attention(weights: object, source: Sequence[str], title: str = "") -> go.Figure:
    """One decoding step's attention over the source words, as bars (they sum to 1)."""
    w = np.asarray(weights, dtype=float)  # (S,)
    x = axis_labels(list(source), len(w), "s")
    fig = go.Figure(go.Bar(x=x, y=w, marker_color=style.BAR_COLOR,
                           hovertemplate="%{x}: %{y:.3f}<extra></extra>"))  # fmt: skip
    style.apply_layout(fig, title, height=300)
    fig.update_yaxes(range=[0, 1], title="weight")
    fig.update_xaxes(type="category", **fit.every_label(x, fit.HALF_1280_PX, x=True))
    return fig


CONTEXT_BAR_PX = 240  # the colour bar under a vector strip: room for five 16 px labels


def context_vector(context: object, title: str = "") -> go.Figure:
    """A vector (d,) (a context vector, a query) as one row of coloured cells (diverging
    around 0)."""
    c = np.asarray(context, dtype=float).reshape(1, -1)  # (1, d)
    lo, hi = style.symmetric_range(c)
    # The colour bar lies under the strip, as long as a half-width plot (#20 item 10: a
    # vertical bar beside a 40 px strip was 40 px long, its five labels on top of each other).
    bar = {"orientation": "h", "lenmode": "pixels", "len": CONTEXT_BAR_PX, "thickness": 14,
           "x": 0.5, "xanchor": "center", "yref": "container", "y": 0.02, "yanchor": "bottom",
           "nticks": 5, "tickfont": {"size": style.TICK_SIZE}}  # fmt: skip
    fig = go.Figure(go.Heatmap(z=c, zmin=lo, zmax=hi, colorscale=style.DIVERGING, colorbar=bar,
                               hovertemplate="dimension %{x}: %{z:.3f}<extra></extra>"))  # fmt: skip
    style.apply_layout(fig, title, height=280)
    fig.update_layout(margin={"b": 130})
    fig.update_yaxes(showticklabels=False)
    fig.update_xaxes(title=f"dimension (d = {c.shape[1]})")
    return fig


def accuracy_by_length(scores: dict[str, dict[int, float]], train_max: int) -> go.Figure:
    """Exact match against source length, one line per model; a dashed line marks the
    longest training sentence. ``scores``: kind -> {length: exact-match rate}."""
    fig = go.Figure()
    for kind, raw in scores.items():
        by_len = {int(n): v for n, v in raw.items()}  # JSON keys are strings
        lengths = sorted(by_len)
        fig.add_trace(go.Scatter(x=lengths, y=[by_len[n] for n in lengths], mode="lines+markers",
                                 name=KIND_NAMES.get(kind, kind)))  # fmt: skip
    fig.add_vline(x=train_max + 0.5, line_dash="dash", annotation_text="longest in training")
    style.apply_layout(fig, "Exact match against source length (held-out sentences)", 420)
    fig.update_xaxes(title="source words (full stop included)")
    fig.update_yaxes(title="exact match", range=[0, 1.05], tickformat=".0%")
    return fig


def kernel_regression(x, y, grid, truth, pred, query: float | None = None) -> go.Figure:
    """Nadaraya-Watson: the training pairs (keys x, values y), the true function and the
    prediction on ``grid``; ``query`` marked with a vertical line."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=x, y=y, mode="markers", name="training pairs (x_i, y_i)"))
    fig.add_trace(go.Scatter(x=grid, y=truth, mode="lines", name="true f(x)",
                             line={"dash": "dot", "color": "#6b7280"}))  # fmt: skip
    fig.add_trace(go.Scatter(x=grid, y=pred, mode="lines", name="prediction f̂(x)",
                             line={"color": style.HIGHLIGHT_COLOR, "width": 3}))  # fmt: skip
    if query is not None:
        fig.add_vline(x=query, line_dash="dash", annotation_text="query")
    style.apply_layout(fig, "Nadaraya–Watson regression", 560)
    # The legend across the figure's foot: at its default place (right) it took most of a
    # half-width column and squeezed the plot to ~80 px; above the plot its three lines
    # (a half-width column at 1280 px) ran into the title.
    fig.update_layout(legend={"orientation": "h", "x": 0, "yref": "container", "y": 0,
                              "yanchor": "bottom"}, margin={"b": 190})  # fmt: skip
    fig.update_xaxes(title="x")
    fig.update_yaxes(title="y")
    return fig


def kernel_weights(weights: object, grid: object, keys: object) -> go.Figure:
    """The attention weights alpha(x, x_i): rows are queries on the grid (Q,), columns
    the training keys (N,) at their x_i on a linear axis, ticks in x's units (each row
    sums to 1)."""
    w = np.asarray(weights, dtype=float)  # (Q, N)
    fig = go.Figure(go.Heatmap(
        z=w, x=np.asarray(keys, dtype=float), y=np.asarray(grid, dtype=float),
        colorscale=style.SEQUENTIAL, zmin=0,
        hovertemplate="query x = %{y:.2f}<br>key x_i = %{x:.2f}<br>weight: %{z:.3f}"
        "<extra></extra>",
    ))  # fmt: skip
    style.apply_layout(fig, "Attention weights α(x, x_i)", 420)
    fig.update_xaxes(title="key x_i (training input)", type="linear", nticks=6)
    fig.update_yaxes(title="query x", type="linear", autorange="reversed", nticks=6)
    return fig
