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

from viz import fit, play, spec, style
from viz.click import add_click_layer
from viz.heat import check_tokens, heat_trace, square


def attention_heatmap(
    weights: object,
    tokens: Sequence[object],
    title: str = "",
    zmin: float | None = None,
    zmax: float | None = None,
    colorscale: str | None = None,
    colorbar_title: str = "attention weight",
    width_px: int = fit.HALF_1280_PX,
) -> spec.Spec:
    """Heatmap of one attention pattern, sized for any T (``viz.fit``): 22 px a row
    until the heatmap is as tall as it is wide in half the page (the compare view),
    smaller rows after that; on a long sentence every k-th token labels the axes
    (plotly draws more as the user zooms in) and the hover still names both tokens and
    the weight of every cell.

    Args:
        weights: (T, T) array, row i = query token i, column j = key token j.
        tokens: T token strings (may repeat or contain HTML; labels become ``"3·the"``).
        title: figure title.
        zmin, zmax: colour range (default ``style.weight_colors``: 0..1, the range of
            softmax weights, or symmetric at 0 for signed weights).
        colorscale: plotly colour scale, default ``style.weight_colors``'.
        colorbar_title: what the colour shows.
        width_px: the plot's expected width at a 1280 px window (``fit.HALF_1280_PX``
            beside another figure, ``fit.FULL_1280_PX`` across the page): every token
            labels the axes up to ``fit.MAX_LABELLED`` tokens, in a font that fits it.

    Raises:
        ValueError: if weights is not square or ``len(tokens) != T``.
    """
    w = square(weights, "weights")
    check_tokens(tokens, w.shape[0], "weights")
    colors = style.weight_colors(w)
    if zmin is not None and zmax is not None:
        colors = {"zmin": zmin, "zmax": zmax, "colorscale": colorscale or style.SEQUENTIAL}
    labels = style.token_labels(tokens)
    fig = _heatmap(w, labels, title, 0, colors, colorbar_title, width_px)
    return add_click_layer(fig, labels, w)


def _heatmap(
    w: np.ndarray,
    labels: list[str],
    title: str,
    room_px: int,
    colors: dict,
    colorbar: str,
    width_px: int,
) -> spec.Spec:
    """The (T, T) heatmap of ``w`` expected ``width_px`` wide, its figure ``room_px``
    taller for plots under it."""
    t = w.shape[0]
    height = fit.heat_height(t, room_px, width_px)
    cbar = {"title": {"text": colorbar, "side": "right"}}  # vertical: leaves room for T
    layout: dict = {}
    if width_px <= fit.HALF_1280_PX:  # beside another figure: the bar above, the plot wide
        cbar = {"title": {"text": colorbar, "side": "top"}, "orientation": "h", "x": 0.5,
                "xanchor": "center", "y": 1.0, "yanchor": "bottom", "len": 0.8,
                "thickness": 12}  # fmt: skip
        layout["margin"] = {**style.MARGIN, "t": 150, "r": 20, "l": 40}
    trace = heat_trace(w, labels, labels, **colors, colorbar=cbar)
    key = {"title": {"text": "key", "standoff": 14}}  # under its labels, not on them (#44)
    x, y = spec.heat_axes(**key, **fit.every_label(labels, width_px, x=True))
    rows_px = height - fit.MARGINS_PX - room_px  # the heatmap's own height
    layout["xaxis"] = x
    layout["yaxis"] = {**y, **spec.titled("query"), **fit.every_label(labels, rows_px)}
    return spec.square_cells(spec.figure([trace], layout, title=title, height=height))


ROW_PX = 190  # height of the query-row bars under the heatmap
ROW_GAP_PX = 70  # between the heatmap and the bars: room for the bars' title


def attention_with_row(
    weights: object,
    tokens: Sequence[object],
    query_index: int,
    title: str = "",
    frames: bool = True,
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
        frames: with the ▶ play frames (one per query, up to ``play.MAX_FRAMES``).

    Raises:
        ValueError: if weights is not square, ``len(tokens) != T`` or the query index
            is outside [0, T).
    """
    w = square(weights, "weights")
    t = w.shape[0]
    check_tokens(tokens, t, "weights")
    if not 0 <= query_index < t:
        raise ValueError(f"query_index {query_index} outside [0, {t})")
    colors = style.weight_colors(w)  # signed weights (delta): diverging at 0
    labels = style.token_labels(tokens)
    room = ROW_GAP_PX + ROW_PX
    fig = _heatmap(w, labels, title, room, colors, "attention weight", fit.COLUMN_PX)
    layout = fig["layout"]
    if t <= play.MAX_FRAMES:  # ▶ play steps through the queries in the browser
        layout.update(play.controls())
        play.make_room(layout, max_height=fit.MAX_HEIGHT_PX)
    margin = {**style.MARGIN, **layout.get("margin", {})}
    plot_px = layout["height"] - margin["t"] - margin["b"]  # both plots
    row_top = ROW_PX / plot_px  # paper y where the bars end and the gap begins
    heat_bottom = (ROW_PX + ROW_GAP_PX) / plot_px
    bars = _row_bars(w[query_index], labels, query_index)  # (T,) weights of one query
    fig["data"].append(bars)
    add_click_layer(fig, labels, w)
    top = max(1.22, 1.22 * float(w.max()))  # the bars' axis's top
    fig["data"].append(_key_columns(labels, top))
    layout["barmode"] = "overlay"  # each column behind its bar, not beside it
    fig["data"][0]["colorbar"].update(y=(1 + heat_bottom) / 2, len=1 - heat_bottom)
    layout["xaxis"] = {**layout["xaxis"], "anchor": "y2"}  # key labels under the bars
    layout["yaxis"] = {**layout["yaxis"], "domain": [heat_bottom, 1.0]}
    layout["yaxis2"] = {
        **spec.titled("weight"),
        "domain": [0.0, row_top],
        "range": [min(0.0, 1.22 * float(w.min())), top],
        "anchor": "x",
        "automargin": True,
    }
    layout["uniformtext"] = {"minsize": style.SMALL_TICK_SIZE, "mode": "show"}  # never shrunk
    layout["shapes"] = [_row_outline(query_index, t)]
    layout["annotations"] = [_row_title(labels, query_index, row_top)]
    if frames and t <= play.MAX_FRAMES:
        fig["frames"] = [_query_frame(w, labels, i, row_top) for i in range(t)]
    return fig


INSTANT_HEADS_MAX = 8  # heads a layer may have for its figures to carry each other's
INSTANT_HEADS_MAX_T = play.MAX_FRAMES  # tokens, likewise (z of H heads rides along)


def with_heads(fig: spec.Spec, others: dict[int, spec.Spec]) -> spec.Spec:
    """``fig`` (an :func:`attention_with_row` figure of one head) carrying, under its
    top-level key ``"heads"``, what differs in each other head's figure of the same
    sentence, layer and query: ``{"<h>": {"data": [per trace, the keys that differ],
    "layout": {the top-level keys that differ}}}``. ``ui/chart.js`` draws a head picked
    in the Head control from it at once, before the rerun sends that head's figure.

    The cells' hover text is left out (``""``: T² strings a head; the rerun brings it).

    Args:
        fig: the figure shown, built with its frames.
        others: head -> that head's figure, built the same way (frames may be left out).

    Returns:
        ``fig`` itself, changed.
    """
    fig["heads"] = {str(h): _changes(fig, other) for h, other in others.items()}
    return fig


def _changes(base: spec.Spec, other: spec.Spec) -> dict:
    data = [
        {k: ("" if k == "hovertext" else v) for k, v in trace.items() if _differs(v, old.get(k))}
        for old, trace in zip(base["data"], other["data"], strict=True)
    ]
    layout = {k: v for k, v in other["layout"].items() if _differs(v, base["layout"].get(k))}
    return {"data": data, "layout": layout}


def _differs(a: object, b: object) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return not (
            isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.array_equal(a, b)
        )
    return a != b


def _row_title(labels: list[str], query_index: int, row_top: float) -> dict:
    where = f"Row {query_index}: where does {labels[query_index]} look?"
    return spec.subplot_title(where, 0.5, row_top + 0.01)


def _query_frame(w: np.ndarray, labels: list[str], i: int, row_top: float) -> dict:
    """Frame ``i``: query i's bars (trace 1), its outline and title."""
    bars = _row_bars(w[i], labels, i)
    keep = {"type", "y", "marker", "text"}
    return {
        "name": str(i),
        "data": [{k: v for k, v in bars.items() if k in keep}],
        "traces": [1],
        "layout": {"shapes": [_row_outline(i, len(labels))],
                   "annotations": [_row_title(labels, i, row_top)]},
    }  # fmt: skip


def _row_bars(row: np.ndarray, labels: list[str], query_index: int) -> dict:
    """Bars of one query's (T,) weights on the key axis ``x`` and the y axis ``y2``,
    with their values as text while the bars are wide enough for it."""
    colors = [
        style.HIGHLIGHT_COLOR if j == query_index else style.BAR_COLOR for j in range(len(row))
    ]
    bars = {
        "type": "bar",
        "x": labels,
        "y": row,
        "xaxis": "x",
        "yaxis": "y2",
        "marker": {"color": colors},
        "showlegend": False,
        "customdata": np.arange(len(row), dtype=np.int32),  # a click makes this key the query
        "unselected": {"marker": {"opacity": 1}},  # a clicked bar dims no other
        "hovertemplate": "key: %{x}<br>weight: %{y:.3f}<extra></extra>",
    }
    if fit.bars_fit_text(len(row)):  # each bar's weight on it; thinner bars: in the hover
        # upright text across a bar 14 px wide at 1280 px: plotly shrank "0.52" to fit
        # the bar's width, ~6 px (#20 item 11); rotated it keeps 13 px (uniformtext)
        text = {"text": [f"{v:.2f}" for v in row], "textposition": "outside", "textangle": -90}
        bars.update(text, textfont={"size": style.SMALL_TICK_SIZE}, cliponaxis=False)
    return bars


KEY_COLUMNS = "key columns"  # the trace that makes a key's whole column a click target


def _key_columns(labels: list[str], top: float) -> dict:
    """Invisible bars from 0 to ``top`` (the bars' axis's top), one per key: a click
    anywhere in key j's column makes j the query, not only on its bar, 1-8 px tall for
    most keys of a row (#44 item 5). Laid over the bars (``barmode`` overlay)."""
    return {
        "type": "bar",
        "name": KEY_COLUMNS,
        "x": labels,
        "y": np.full(len(labels), top, dtype=np.float32),
        "xaxis": "x",
        "yaxis": "y2",
        "marker": {"color": "rgba(0,0,0,0)"},
        "showlegend": False,
        "customdata": np.arange(len(labels), dtype=np.int32),
        "unselected": {"marker": {"opacity": 1}},
        "hovertemplate": "key: %{x}: click to make it the query<extra></extra>",
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
