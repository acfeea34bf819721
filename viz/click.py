"""The click layer: a point on every cell of a (T, T) token heatmap, so that a click on
a cell picks its query.

Streamlit returns no selection for heatmaps (streamlit issue 8760); a scatter trace over
the cells does. The layer's points sit on axes of their own, invisible, laid over the
heatmap's (``overlaying``, the same ranges): a point's x and y are the key's and query's
*indices* (small typed integer arrays), where category axes would need every cell's two
token labels (at T = 64, 135 of the layer's 200 kB; the layer was 8x its heatmap). Its
hover still names both tokens: the overlay axes carry the labels as array ticks
(``tickvals`` 0..T-1, ``ticktext`` the labels, drawn nowhere), and plotly.js formats a
hovered value that is a tick as that tick's text.

Pure functions: arrays in, plain spec parts out (``viz.spec``).
"""

from __future__ import annotations

import numpy as np

CLICK_MAX_T = 128  # a click layer up to T = 128: 16,384 invisible points
CLICK = "click"  # the click layer's trace name
OVERLAY_OFFSET = 10  # the layer over axes x<n>/y<n> is drawn on x<n+10>/y<n+10>


def pin_cells(layout: dict, t: int, axes: tuple[str, str] = ("x", "y")) -> None:
    """Give a (T, T) heatmap that carries a click layer (:func:`add_click_layer`) the
    ranges the heatmap alone would have (each token one category, the first row on top):
    a layer's points otherwise widen the autorange, which squeezed the cells and made the
    mask view's upright key labels touch at 1280 px. Nothing above ``CLICK_MAX_T``
    tokens (no layer there)."""
    if t > CLICK_MAX_T:
        return
    x, y = _layout_key(axes[0]), _layout_key(axes[1])
    layout[x] = {**layout.get(x, {}), "range": [-0.5, t - 0.5], "autorange": False}
    layout[y] = {**layout.get(y, {}), "range": [t - 0.5, -0.5], "autorange": False}


def _layout_key(axis: str) -> str:
    """``"x2"`` -> ``"xaxis2"``."""
    return f"{axis[0]}axis{axis[1:]}"


def overlay(axis: str) -> str:
    """The id of the click layer's axis over ``axis``: ``"x"`` -> ``"x11"``,
    ``"y3"`` -> ``"y13"``."""
    return f"{axis[0]}{int(axis[1:] or 1) + OVERLAY_OFFSET}"


def _overlay_axis(labels: list[str], over: str, anchor: str, reverse: bool) -> dict:
    """An axis laid over ``over`` with the heatmap's cell positions, drawing nothing; its
    ``ticktext`` names the tokens in the click layer's hover. Not ``fixedrange``: a pan
    or zoom of the heatmap moves the axes laid over it too (plotly.js moves a subplot's
    overlays with it), so each point stays on its cell; fixed ones stayed put."""
    t = len(labels)
    span = [t - 0.5, -0.5] if reverse else [-0.5, t - 0.5]
    return {
        "overlaying": over, "anchor": anchor, "range": span, "autorange": False,
        "tickmode": "array", "tickvals": list(range(t)), "ticktext": labels,
        "showticklabels": False, "ticks": "", "showgrid": False, "zeroline": False,
        "showline": False, "title": {"text": ""},
    }  # fmt: skip


def add_click_layer(
    fig: dict,
    labels: list[str],
    values: np.ndarray,
    axes: tuple[str, str] = ("x", "y"),
    what: str = "weight",
    max_t: int = CLICK_MAX_T,
) -> dict:
    """``fig`` with a click layer over its (T, T) heatmap on ``axes`` (category axes
    labelled ``labels``): one point per cell, whose ``customdata`` is the query (row)
    index, and the heatmap's ranges pinned (:func:`pin_cells`). Nothing above ``max_t``
    tokens: the query is then picked in its control, or by its bar.

    The points are text points with no text: nothing is drawn for them, yet plotly
    hovers and selects them (a point with neither marker nor text is never selected).
    Invisible markers (opacity 0) were drawn all the same, T² SVG paths styled one by
    one on every redraw: half the time plotly.js took to draw the attention heatmap at
    T = 16 (92 -> 44 ms), and Streamlit redraws a changed chart three times a rerun.

    The points hover as the heatmap's cells do (query, key, ``what``: ``values`` (T, T)
    to 3 decimals, or 0/1 for the mask), since the nearest point takes the hover from
    the cell under it.

    Returns:
        ``fig`` itself, changed: a trace appended, two overlay axes added.
    """
    t = len(labels)
    if t > max_t:
        return fig
    index = np.int8 if t <= 127 else np.int16
    rows, cols = np.divmod(np.arange(t * t), t)  # (T*T,) each
    flat = np.asarray(values, dtype=float).reshape(-1)  # (T*T,)
    text = [f"{v:.0f}" for v in flat] if what == "mask" else [f"{v:.3f}" for v in flat]
    x_id, y_id = overlay(axes[0]), overlay(axes[1])
    fig["data"].append(
        {
            "type": "scatter",
            "name": CLICK,
            "x": cols.astype(index),  # (T*T,) the key of each cell
            "y": rows.astype(index),  # (T*T,) its query
            "xaxis": x_id,
            "yaxis": y_id,
            "customdata": rows.astype(index),  # a click picks this query
            "mode": "text",
            "text": "",
            "hovertext": text,
            "hovertemplate": f"query: %{{y}}<br>key: %{{x}}<br>{what}: %{{hovertext}}<extra></extra>",
            "showlegend": False,
        }
    )
    layout = fig["layout"]
    layout[_layout_key(x_id)] = _overlay_axis(labels, axes[0], y_id, reverse=False)
    layout[_layout_key(y_id)] = _overlay_axis(labels, axes[1], x_id, reverse=True)
    pin_cells(layout, t, axes)
    return fig
