"""Sizes of the token heatmaps at any sequence length: a figure stays within one screen,
its cells shrink as T grows, and its tick labels thin out to a readable count.

Pure numbers, no figures. The browser sets a chart's width (it fills its column); its
height is the figure's own. A category axis of plotly draws every ``dtick``-th label with
``dtick = ceil(T / nticks)`` and works ``dtick`` out again when the user zooms in, so a
zoomed-in stretch of a long sentence shows every one of its tokens; without ``nticks``
plotly packs a label every 19 px (16 px type), which is too tight to read on a projector.
"""

from __future__ import annotations

import math

from viz import style

MAX_HEIGHT_PX = 900  # the tallest figure: one screen of a 1080-line projector
ROW_PX = 22  # a row per token while the figure fits: every label drawn, 22 px apart
LABEL_PX = ROW_PX  # room per tick label where labels are thinned: as when every row has one
MARGINS_PX = 260  # title, margins and the key labels under a heatmap (style.MARGIN + labels)
# A heatmap's plot width in px, window 1500 px wide with the sidebar: in the attention
# view's wide column, and in half the page (the compare view).
COLUMN_PX = 400
HALF_PX = 320
BAR_TEXT_PX = 14  # the narrowest bar that carries its value ("0.12", upright, 13 px) as text


def heat_height(t: int, room_px: int = 0, width_px: int = HALF_PX, floor_px: int = 480) -> int:
    """Height in px of a figure whose main plot is a heatmap of ``t`` token rows.

    ``ROW_PX`` a row (plus margins) while that fits, never less than ``floor_px``; past
    that the rows shrink with T: the heatmap is at most ``width_px`` tall, so that its
    cells stay about square, and the whole figure at most ``MAX_HEIGHT_PX``.

    Args:
        t: token rows T.
        room_px: height of the other plots in the same figure (the query's bars).
        width_px: the heatmap's expected width (``COLUMN_PX``, ``HALF_PX``).
        floor_px: the least height of the figure without ``room_px``.
    """
    rows_px = min(ROW_PX * t, width_px)
    if t <= MAX_LABELLED:  # room for every token's label (``every_label``)
        rows_px = max(rows_px, axis_px_for(t))
    return min(MAX_HEIGHT_PX, max(floor_px, rows_px + MARGINS_PX) + room_px)


def label_ticks(n: int, axis_px: float) -> dict:
    """Axis settings that give n category labels at least ``LABEL_PX`` px each:
    ``{"nticks": k}`` when not every label fits on ``axis_px`` px, else ``{}`` (plotly's
    default: a label every 19 px at most).

    Args:
        n: categories on the axis (tokens T).
        axis_px: the axis's length in px (for x, the expected plot width).
    """
    fit = max(2, int(axis_px // LABEL_PX))
    return {} if n <= fit else {"nticks": fit}


MAX_LABELLED = 40  # up to this many tokens every token labels its axes (#20 item 8, #21)
MIN_TICK_FONT = 11  # px: the smallest tick label a figure draws
LINE = 1.25  # room a label needs across its baseline, in units of its font size
# Plot widths in px at the narrowest window served (1280 px, sidebar open), measured:
# a heatmap across the page, and one of two side by side (colour bar under it).
FULL_1280_PX = 560
HALF_1280_PX = 270  # square cells (#44): 230 gave 16 tokens 11 px labels
SIDE_BY_SIDE_MAX = 16  # tokens: two heatmaps side by side still label each one then


def tick_font(n: int, axis_px: float) -> int:
    """The tick font size (px) that fits n labels on ``axis_px`` px, between
    ``MIN_TICK_FONT`` and ``style.TICK_SIZE``."""
    fits = axis_px / max(n, 1) / LINE
    return int(min(style.TICK_SIZE, max(MIN_TICK_FONT, fits)))


def axis_px_for(n: int) -> int:
    """The least axis length (px) on which n labels fit at ``MIN_TICK_FONT``."""
    return math.ceil(n * MIN_TICK_FONT * LINE)


def every_label(labels: list[str], axis_px: float, x: bool = False) -> dict:
    """Category-axis settings that draw every one of ``labels`` (plotly's own thinning
    skipped every second token of a 16-token sentence, even at 1920 px) up to
    ``MAX_LABELLED`` of them, in a font that fits ``axis_px``; an x axis turns its
    labels upright (-90°) when they would overlap at -45°. More labels than that:
    :func:`label_ticks` (every k-th, plotly adds more on zoom).

    Shared by every token heatmap (``viz.attention``, ``viz.mask``, ``viz.tensors``,
    ``viz.seq2seq``) and by the presenter mode (issue #21).

    Args:
        labels: the axis's category labels, in order (escaped, unique).
        axis_px: the axis's expected length in px (``FULL_1280_PX``, ``HALF_1280_PX``,
            or the figure's own rows).
        x: the axis is horizontal (labels may be turned).
    """
    n = len(labels)
    if n > MAX_LABELLED:
        return label_ticks(n, axis_px)
    size = tick_font(n, axis_px)
    out = {"tickmode": "array", "tickvals": list(labels), "ticktext": list(labels),
           "tickfont": {"size": size}}  # fmt: skip
    if x and n * size * LINE / math.sqrt(0.5) > axis_px:  # -45°: labels closer by cos 45°
        out["tickangle"] = -90
    return out


def shown_labels(n: int, axis_px: float) -> int:
    """How many of n labels plotly draws with :func:`label_ticks`'s settings (every
    ``ceil(n / nticks)``-th)."""
    ticks = label_ticks(n, axis_px)
    step = math.ceil(n / ticks["nticks"]) if ticks else 1
    return math.ceil(n / step)


def bars_fit_text(n: int, axis_px: float = HALF_1280_PX) -> bool:
    """Whether n bars on ``axis_px`` px are wide enough to carry their values as text."""
    return n * BAR_TEXT_PX <= axis_px


DEFAULT_HEIGHT_PX = 450  # plotly's height of a figure that sets none
MATRIX_ROW_PX = 2  # a matrix row's height once plotly's default gives it less
WIDE_PX = 900  # a full-width plot's width in px (window 1500 px wide with the sidebar)


def matrix_height(rows: int) -> int | None:
    """Height in px of a matrix heatmap of ``rows`` rows (Q, K, V (T, d_head), a state):
    None (plotly's default) while ``MATRIX_ROW_PX`` a row fits in it, then
    ``MATRIX_ROW_PX`` a row up to ``MAX_HEIGHT_PX``."""
    need = MATRIX_ROW_PX * rows + style.MARGIN["t"] + style.MARGIN["b"]
    return None if need <= DEFAULT_HEIGHT_PX else min(MAX_HEIGHT_PX, need)
