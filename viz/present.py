"""Presenter mode's figures: the same spec, readable from the back row (#21 item 3).

:func:`enlarged` takes a finished plotly spec (``{"data", "layout"}``) and returns a new
one with the same traces (shared, not copied: cached specs are never modified) and a
layout whose every text is at least ``FONT_PX`` px: tick labels, axis titles, the hover
label, annotations; the title a step larger. A figure of token heatmaps side by side (one
with its click layer, or a lesson's panels) gets ``ROW_PX`` a row and every token
labelled up to ``LABEL_ALL_T`` tokens, so that 16 tokens fit above the fold of a
1280×720 projector.

Colour bars move (:func:`_moved_colorbar`): with 20 px labels, plotly (4.1, 4.2) shifted
an x axis title up into the rotated key labels when a horizontal colour bar sat above
the plot, and a bar under the plot ran over the title. A lone bar above turns upright at
the right; bars under the plots go to the figure's bottom edge.
"""

from __future__ import annotations

FONT_PX = 20  # the least text size on a projector (tick labels, hover)
TITLE_PX = 26
ROW_PX = 20  # a heatmap row: one 20 px label per token
FIT_ROW_PX = 15  # the least a row gives way to keep a figure above the fold (labels apart)
FIT_ROWS = 16  # ... in a heatmap of at most this many rows (more at 15 px ran together)
LABEL_ALL_T = 40  # every token labelled up to this many
FRAME_PX = 190  # title, margins, the rotated key labels and the axis title under them
LEGEND_TOP_PX = 130  # top margin for the title and a legend of two 20 px rows above the plot
BARS_PX = 80  # colour bars under the panels, with their numbers and titles
TITLE_STANDOFF_PX = 8  # an axis title this far beyond its tick labels (automargin makes room)
MARGIN = {"t": 50, "b": 40, "l": 40, "r": 20}  # automargin adds room for the labels


def _bigger(font: dict | None, px: int) -> dict:
    font = dict(font or {})
    font["size"] = max(font.get("size") or 0, px)
    return font


def _axis(axis: dict, label_all: bool) -> dict:
    axis = dict(axis)
    axis["tickfont"] = _bigger(axis.get("tickfont"), FONT_PX)
    if isinstance(axis.get("title"), dict):
        # Plotly keeps an axis title at a fixed distance unless ``standoff`` is set: at 20 px
        # the rotated key labels ran over "key" (1280×720). With automargin on, a standoff
        # puts the title beyond the labels and grows the margin to fit it.
        axis["title"] = {
            **axis["title"],
            "font": _bigger(axis["title"].get("font"), FONT_PX),
            "standoff": TITLE_STANDOFF_PX,
        }
    if axis.get("type") == "log" and "dtick" not in axis:
        axis["dtick"] = 1  # powers of ten only: plotly's 2 and 5 between them were 15 px
    if label_all and "nticks" in axis:  # one label per token
        axis.pop("nticks")
        axis["dtick"] = 1
    elif label_all and axis.get("type") == "category" and "tickvals" not in axis:
        axis["dtick"] = 1  # plotly's own thinning skipped every second token at 20 px
    return axis


def _moved_colorbar(colorbar: dict, lone: bool) -> dict | None:
    """A horizontal colour bar's presenter place, or None to keep it."""
    if colorbar.get("orientation") != "h":
        return None
    title = colorbar.get("title")
    title = title if isinstance(title, dict) else {}
    if colorbar.get("yanchor") == "bottom" and lone:  # above the plot: upright, at the right
        return {"title": {**title, "side": "right"}}
    if colorbar.get("yanchor") == "top":  # under the plot: at the figure's bottom edge, its
        # title under its numbers (above, a 20 px title ran into the bar)
        return {**colorbar, "yref": "container", "y": 0.0, "yanchor": "bottom",
                "title": {**title, "side": "bottom"}}  # fmt: skip
    return None


def _with_colorbars(data: list) -> list:
    """The traces, each with a colour bar to move copied (shallow: arrays shared)."""
    lone = sum(isinstance(trace.get("colorbar"), dict) for trace in data) == 1
    out = []
    for trace in data:
        bar = trace.get("colorbar")
        moved = _moved_colorbar(bar, lone) if isinstance(bar, dict) else None
        out.append(trace if moved is None else {**trace, "colorbar": moved})
    return out


def _y_axis(trace: dict) -> str:
    """The layout key of a trace's y axis: ``"y2"`` -> ``"yaxis2"``."""
    return "yaxis" + (trace.get("yaxis") or "y")[1:]


def token_rows(spec: dict) -> int | None:
    """T of a figure of (T, T) token heatmaps side by side (one, or the lessons' panels:
    every y axis on one domain) with at most their click layers, else None. Rows are
    tokens when labelled as ``viz.style.token_labels`` labels them (``"3·the"``)."""
    kinds = {trace.get("type") for trace in spec["data"]}
    heats = [trace for trace in spec["data"] if trace.get("type") == "heatmap"]
    if not heats or kinds - {"heatmap", "scatter"}:
        return None
    rows = {len(h["y"]) if _token_labels(h.get("y")) else None for h in heats}
    axes = [spec["layout"].get(_y_axis(h), {}) for h in heats]
    domains = {tuple(axis.get("domain", (0.0, 1.0))) for axis in axes}
    if len(rows) != 1 or None in rows or len(domains) != 1:
        return None
    return rows.pop()


def _token_labels(labels: object) -> bool:
    return isinstance(labels, list) and all(isinstance(v, str) and "·" in v for v in labels)


def enlarged(spec: dict, max_height: int | None = None) -> dict:
    """``spec`` for a projector: a new layout, the same trace objects (a trace whose
    colour bar moves is a shallow copy: its arrays are shared), its play frames' text as
    large. A wired spec (``viz.spec.Wired``) stays one: the new layout holds plain values
    only, so it is not walked again.

    ``max_height`` (px): the room above the fold. A taller figure with traces is made
    that tall; a token heatmap only up to ``FIT_ROWS`` rows of at least ``FIT_ROW_PX``
    (a 40-token heatmap keeps a label per token and is taller than a 1280×720 screen, a
    19-word translation 60 px taller); a diagram of
    text boxes (no traces, ``viz.shape_flow``) keeps its height.

    Raises:
        KeyError: if ``spec`` has no ``data`` or ``layout``.
    """
    layout = dict(spec["layout"])
    t = token_rows(spec)
    layout["font"] = _bigger(layout.get("font"), FONT_PX)
    layout["hoverlabel"] = {**layout.get("hoverlabel", {}), "font": {"size": FONT_PX + 2}}
    if isinstance(layout.get("title"), dict):
        layout["title"] = {
            **layout["title"],
            "font": _bigger(layout["title"].get("font"), TITLE_PX),
        }
    label_all = t is not None and t <= LABEL_ALL_T
    for key, value in list(layout.items()):
        if key.startswith(("xaxis", "yaxis")) and isinstance(value, dict):
            layout[key] = _axis(value, label_all)
    if "annotations" in layout:
        layout["annotations"] = [
            {**a, "font": _bigger(a.get("font"), FONT_PX)} for a in layout["annotations"]
        ]
    legend = layout.get("legend") or {}
    if layout.get("title") and legend.get("orientation") == "h" and legend.get("y", 0) >= 1:
        # a legend above the plot: at 20 px its rows ran into the 26 px title (plotly
        # centres the title in the top margin and does not move it for the legend)
        margin = layout.get("margin") or {}
        layout["margin"] = {**margin, "t": max(margin.get("t") or 0, LEGEND_TOP_PX)}
    data = _with_colorbars(spec["data"])
    if t is not None:
        under = any((trace.get("colorbar") or {}).get("yref") == "container" for trace in data)
        frame_px = FRAME_PX + (BARS_PX if under else 0)
        row_px = ROW_PX
        if max_height and t <= FIT_ROWS and t * FIT_ROW_PX + frame_px <= max_height:
            row_px = min(ROW_PX, (max_height - frame_px) / t)
        layout["height"] = round(row_px * min(t, LABEL_ALL_T) + frame_px)
        layout["margin"] = {**layout.get("margin", {}), **MARGIN}
    elif max_height and spec["data"] and (layout.get("height") or 450) > max_height:
        layout["height"] = max_height  # not a diagram of text boxes (no traces): its text
        # is placed in pixels and would overlap
    out = {**spec, "data": data, "layout": layout}  # "frames" (▶ play) and the rest kept
    if "frames" in spec:
        out["frames"] = [_frame(frame) for frame in spec["frames"]]
    return type(spec)(out) if isinstance(spec, dict) else out


def _frame(frame: dict) -> dict:
    """A play frame (``viz.play``) for a projector: the title and annotations its layout
    sets while playing at least as large as :func:`enlarged` makes them (a frame's
    annotations replace the figure's); its traces shared."""
    layout = frame.get("layout")
    if not layout:
        return frame
    layout = dict(layout)
    title = layout.get("title")
    if isinstance(title, dict) and "font" in title:
        layout["title"] = {**title, "font": _bigger(title["font"], TITLE_PX)}
    if "annotations" in layout:
        layout["annotations"] = [
            {**a, "font": _bigger(a.get("font"), FONT_PX)} for a in layout["annotations"]
        ]
    return {**frame, "layout": layout}


def vega_enlarged(spec: dict) -> dict:
    """A Vega-Lite spec for a projector: every axis's and legend's labels and title at
    least ``FONT_PX`` (the charts set them per axis, which a ``config`` cannot
    override), a text mark's too, a title ``TITLE_PX``; an axis thins labels that would
    then overlap (``labelOverlap``). New dicts where something changes; the datasets
    (Arrow bytes) and every other value are shared with ``spec``, which is not changed."""
    return {k: v if k == "datasets" else _vega(k, v) for k, v in spec.items()}


def _vega(key: str, value: object) -> object:
    if isinstance(value, list):
        return [_vega(key, v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {k: _vega(k, v) for k, v in value.items()}
    if key in ("axis", "legend"):
        for field in ("labelFontSize", "titleFontSize"):
            out[field] = max(out.get(field) or 0, FONT_PX)
        if key == "axis":
            out["labelOverlap"] = True
    elif key == "title" and "fontSize" in out:
        out["fontSize"] = max(out["fontSize"], TITLE_PX)
    elif key == "mark" and out.get("type") == "text":
        out["fontSize"] = max(out.get("fontSize") or 0, FONT_PX)
    return out
