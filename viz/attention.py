"""Plotly figures for attention patterns, scores and per-head tensors.

Pure functions: numpy-compatible arrays in, a plain plotly spec out
(``{"data": [...], "layout": {...}}``, see ``viz.spec``; ``go.Figure(spec)`` gives
the plotly.py object). Token strings are user input, so every label and hover text
goes through ``viz.style.token_labels`` / ``viz.style.escape`` (position-prefixed,
HTML-escaped). Titles passed in by the caller are rendered as plotly HTML; escape
user text in them with ``style.escape``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from viz import spec, style
from viz.heat import HOVER_ATTN, check_tokens, heat_trace, numeric, square


def attention_heatmap(
    weights: object,
    tokens: Sequence[object],
    title: str = "",
    zmin: float = 0.0,
    zmax: float = 1.0,
    colorscale: str | None = None,
    colorbar_title: str = "attention weight",
) -> spec.Spec:
    """Heatmap of one attention pattern.

    Args:
        weights: (T, T) array, row i = query token i, column j = key token j.
        tokens: T token strings (may repeat or contain HTML; labels become ``"3·the"``).
        title: figure title.
        zmin, zmax: colour range (default 0..1, the range of softmax weights).
        colorscale: plotly colour scale, default ``style.SEQUENTIAL``.
        colorbar_title: what the colour shows.

    Raises:
        ValueError: if weights is not square or ``len(tokens) != T``.
    """
    w = square(weights, "weights")
    check_tokens(tokens, w.shape[0], "weights")
    labels = style.token_labels(tokens)
    cbar = {"title": {"text": colorbar_title, "side": "right"}}  # vertical: leaves room for T
    scale = colorscale or style.SEQUENTIAL
    trace = heat_trace(w, labels, labels, zmin=zmin, zmax=zmax, colorscale=scale, colorbar=cbar)
    x, y = spec.heat_axes(**spec.titled("key"))
    layout = {"xaxis": x, "yaxis": {**y, **spec.titled("query")}}
    # One readable row per token, whatever T is: 22 px a row plus room for the tick labels.
    return spec.figure([trace], layout, title=title, height=max(480, 22 * w.shape[0] + 260))


def _grid_cell(k: int, x0: float, y1: float, width: float, height: float) -> tuple[dict, dict]:
    """(xaxis, yaxis) domains of small multiple ``k`` (1-based) with its top-left
    corner at (x0, y1) in paper coordinates."""
    x = {"domain": [x0, min(1.0, x0 + width)], "anchor": "y" if k == 1 else f"y{k}"}
    y = {"domain": [max(0.0, y1 - height), y1], "anchor": "x" if k == 1 else f"x{k}"}
    return x, y


def head_grid(attn: object, tokens: Sequence[object], max_tokens_label: int = 12) -> spec.Spec:
    """Small multiples of every head: rows = layers, columns = heads.

    Args:
        attn: (L, H, T, T) attention weights.
        tokens: T token strings.
        max_tokens_label: tick labels are drawn only when T <= this (else hidden);
            y labels on the first column and x labels on the last row only.

    Returns:
        Spec with L*H heatmaps sharing one colour axis fixed to 0..1; subplot
        titles ``"L0 H1"``.

    Raises:
        ValueError: if attn is not (L, H, T, T) or ``len(tokens) != T``.
    """
    a = numeric(attn)
    if a.ndim != 4 or a.shape[2] != a.shape[3]:
        raise ValueError(f"attn must have shape (L, H, T, T), got {a.shape}")
    n_layers, n_heads, t, _ = a.shape
    check_tokens(tokens, t, "attn")
    labels = style.token_labels(tokens)
    show = t <= max_tokens_label
    h_gap, v_gap = 0.03, (0.08 if n_layers > 1 else 0.0)
    width = (1.0 - h_gap * (n_heads - 1)) / n_heads
    height = (1.0 - v_gap * (n_layers - 1)) / n_layers
    small = {"size": style.SMALL_TICK_SIZE}
    traces, layout, titles = [], {}, []
    for layer in range(n_layers):
        for head in range(n_heads):
            k = layer * n_heads + head + 1
            x0 = head * (width + h_gap)
            y1 = 1.0 - layer * (height + v_gap)  # layer 0 on top
            x, y = _grid_cell(k, x0, y1, width, height)
            suffix = "" if k == 1 else str(k)
            traces.append(
                {
                    "type": "heatmap",
                    "z": a[layer, head],  # (T, T)
                    "x": labels,
                    "y": labels,
                    "coloraxis": "coloraxis",
                    "hovertemplate": f"L{layer} H{head}<br>" + HOVER_ATTN,
                    "xaxis": f"x{suffix}",
                    "yaxis": f"y{suffix}",
                }
            )
            layout[f"xaxis{suffix}"] = {
                **x,
                "type": "category",
                "tickangle": -45,
                "automargin": True,
                "tickfont": small,
                "showticklabels": show and layer == n_layers - 1,
            }
            layout[f"yaxis{suffix}"] = {
                **y,
                "type": "category",
                "autorange": "reversed",  # first token at the top
                "automargin": True,
                "tickfont": small,
                "showticklabels": show and head == 0,
            }
            titles.append(spec.subplot_title(f"L{layer} H{head}", x0 + width / 2, y1))
    layout["annotations"] = titles
    layout["coloraxis"] = {
        "cmin": 0.0,
        "cmax": 1.0,
        "colorscale": style.colorscale(style.SEQUENTIAL),
        "colorbar": {"title": {"text": "weight", "side": "right"}},
    }
    return spec.figure(traces, layout, height=max(300, 230 * n_layers + 120))


ROW_PX = 190  # height of the query-row bars under the heatmap
ROW_GAP_PX = 70  # between the heatmap and the bars: room for the bars' title


def attention_with_row(
    weights: object, tokens: Sequence[object], query_index: int, title: str = ""
) -> spec.Spec:
    """The heatmap of :func:`attention_heatmap` with one query's row underneath as bars.

    The bars share the heatmap's key axis, so bar j stands under column j; the query's
    row is outlined in the heatmap and its own bar is highlighted. One figure, not two:
    each Plotly chart costs the browser a fixed price on every new figure.

    Args:
        weights: (T, T) array, row i = query token i, column j = key token j.
        tokens: T token strings.
        query_index: the query whose row (weights[query_index], shape (T,)) the bars show.
        title: figure title (plotly HTML: escape user text with ``style.escape``).

    Raises:
        ValueError: if weights is not square, ``len(tokens) != T`` or the query index
            is outside [0, T).
    """
    w = square(weights, "weights")
    t = w.shape[0]
    check_tokens(tokens, t, "weights")
    if not 0 <= query_index < t:
        raise ValueError(f"query_index {query_index} outside [0, {t})")
    fig = attention_heatmap(w, tokens, title=title)
    labels = fig["data"][0]["x"]
    heat_px = fig["layout"]["height"] - style.MARGIN["t"] - style.MARGIN["b"]  # its plot area
    plot_px = heat_px + ROW_GAP_PX + ROW_PX
    row_top = ROW_PX / plot_px  # paper y where the bars end and the gap begins
    heat_bottom = (ROW_PX + ROW_GAP_PX) / plot_px
    bars = _row_bars(w[query_index], labels, query_index)  # (T,) weights of one query
    fig["data"].append(bars)
    fig["data"][0]["colorbar"].update(y=(1 + heat_bottom) / 2, len=1 - heat_bottom)
    layout = fig["layout"]
    layout["height"] += ROW_GAP_PX + ROW_PX
    layout["xaxis"] = {**layout["xaxis"], "anchor": "y2"}  # key labels under the bars
    layout["yaxis"] = {**layout["yaxis"], "domain": [heat_bottom, 1.0]}
    layout["yaxis2"] = {
        **spec.titled("weight"),
        "domain": [0.0, row_top],
        "range": [0.0, 1.15],
        "anchor": "x",
        "automargin": True,
    }
    layout["shapes"] = [_row_outline(query_index, t)]
    where = f"Row {query_index}: where does {labels[query_index]} look?"
    layout["annotations"] = [spec.subplot_title(where, 0.5, row_top + 0.01)]
    return fig


def _row_bars(row: np.ndarray, labels: list[str], query_index: int) -> dict:
    """Bars of one query's (T,) weights on the key axis ``x`` and the y axis ``y2``."""
    colors = [
        style.HIGHLIGHT_COLOR if j == query_index else style.BAR_COLOR for j in range(len(row))
    ]
    return {
        "type": "bar",
        "x": labels,
        "y": row,
        "xaxis": "x",
        "yaxis": "y2",
        "marker": {"color": colors},
        "text": [f"{v:.2f}" for v in row],
        "textposition": "outside",
        "textfont": {"size": style.SMALL_TICK_SIZE},
        "cliponaxis": False,
        "showlegend": False,
        "hovertemplate": "key: %{x}<br>weight: %{y:.3f}<extra></extra>",
    }


def _row_outline(query_index: int, t: int) -> dict:
    """A rectangle around row ``query_index`` of a (T, T) categorical heatmap."""
    return {
        "type": "rect",
        "xref": "x",
        "yref": "y",
        "x0": -0.5,
        "x1": t - 0.5,
        "y0": query_index - 0.5,
        "y1": query_index + 0.5,
        "line": {"color": style.HIGHLIGHT_COLOR, "width": 3},
    }
