"""Presenter mode's figures: the same spec, readable from the back row (#21 item 3).

:func:`enlarged` takes a finished plotly spec (``{"data", "layout"}``) and returns a new
one with the same traces (shared, not copied: cached specs are never modified) and a
layout whose every text is at least ``FONT_PX`` px: tick labels, axis titles, the hover
label, annotations; the title a step larger. A figure of one token heatmap (with its
click layer) gets ``ROW_PX`` a row and every token labelled up to ``LABEL_ALL_T``
tokens, so that 16 tokens fit above the fold of a 1280×720 projector.
"""

from __future__ import annotations

FONT_PX = 20  # the least text size on a projector (tick labels, hover)
TITLE_PX = 26
ROW_PX = 20  # a heatmap row: one 20 px label per token
LABEL_ALL_T = 40  # every token labelled up to this many
FRAME_PX = 190  # title, margins and the rotated key labels around the heatmap
MARGIN = {"t": 50, "b": 40, "l": 40, "r": 20}  # automargin adds room for the labels


def _bigger(font: dict | None, px: int) -> dict:
    font = dict(font or {})
    font["size"] = max(font.get("size") or 0, px)
    return font


def _axis(axis: dict, label_all: bool) -> dict:
    axis = dict(axis)
    axis["tickfont"] = _bigger(axis.get("tickfont"), FONT_PX)
    if isinstance(axis.get("title"), dict):
        axis["title"] = {**axis["title"], "font": _bigger(axis["title"].get("font"), FONT_PX)}
    if label_all and "nticks" in axis:  # one label per token
        axis.pop("nticks")
        axis["dtick"] = 1
    return axis


def token_rows(spec: dict) -> int | None:
    """T of a figure that is one (T, T) token heatmap and its click layer, else None."""
    kinds = [trace.get("type") for trace in spec["data"]]
    if kinds.count("heatmap") != 1 or set(kinds) - {"heatmap", "scatter"}:
        return None
    heat = next(trace for trace in spec["data"] if trace.get("type") == "heatmap")
    y = heat.get("y")
    return len(y) if isinstance(y, list) else None


def enlarged(spec: dict) -> dict:
    """``spec`` for a projector: a new layout, the same trace objects.

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
    if t is not None:
        layout["height"] = ROW_PX * min(t, LABEL_ALL_T) + FRAME_PX
        layout["margin"] = {**layout.get("margin", {}), **MARGIN}
    return {"data": spec["data"], "layout": layout}
