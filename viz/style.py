"""Shared styling for projector-readable figures.

Constants are used by both the plotly (``viz.attention``, ``viz.shape_flow``) and the
altair (``viz.positional``) modules so every chart in the app looks the same
from the back of a lecture hall.
"""

from __future__ import annotations

import copy
import html
from collections.abc import Sequence
from functools import cache

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

# Font sizes in px. Base >= 16 for projector readability.
FONT_SIZE = 18
TITLE_SIZE = 22
TICK_SIZE = 16
SMALL_TICK_SIZE = 13  # tick labels in small multiples (head grid) only
SUBPLOT_TITLE_SIZE = 16
FONT_FAMILY = "Arial, Helvetica, sans-serif"
# Near-black text: the template's default blue-grey washes out on a projector.
FONT_COLOR = "#111827"

# Colour scales. Sequential for non-negative weights (attention, probabilities),
# diverging centred at 0 for signed values (scores, Q/K/V, states).
SEQUENTIAL = "Blues"
SEQUENTIAL_ALTAIR = "blues"
# plotly's "RdBu" runs red (low) -> blue (high); "_r" makes positive red, negative blue.
DIVERGING = "RdBu_r"
DIVERGING_ALTAIR = "redblue"
BAR_COLOR = "#1f77b4"
HIGHLIGHT_COLOR = "#d62728"

MARGIN = {"l": 80, "r": 40, "t": 80, "b": 80}

# No plotly template: assigning one (even "plotly_white") validates the whole template
# and costs ~40 ms a figure, more than building most figures; a new sentence draws about
# a dozen. plotly.js's own defaults (white background, light grid) are what we want, and
# tick labels, axis titles and subplot titles inherit the layout font.
TEMPLATE = "none"


@cache
def _template_spec() -> dict:
    return pio.templates[TEMPLATE].to_plotly_json()


def template_spec() -> dict:
    """The ``"none"`` template as plotly.js receives it (plain specs carry it expanded)."""
    return copy.deepcopy(_template_spec())


@cache
def colorscale(name: str) -> list[list]:
    """A named plotly colour scale (``"Blues"``, ``"RdBu_r"``) as the ``[[position,
    colour], ...]`` list plotly.py's validator expands it to (plotly.js's own scales of
    the same names differ)."""
    return [list(stop) for stop in go.Heatmap(colorscale=name).colorscale]


def layout(title: str | None = None, height: int | None = None) -> dict:
    """The shared font sizes, margins and white template as a plain layout dict.

    Args:
        title: optional title text (escaped by the caller if it contains user text).
        height: optional figure height in px.
    """
    out = {
        "template": template_spec(),
        "font": {"size": TICK_SIZE, "family": FONT_FAMILY, "color": FONT_COLOR},
        "margin": dict(MARGIN),
        "hoverlabel": {"font": {"size": FONT_SIZE}},
        # Room for long token labels (plotly.js's default without a template is no room).
        "xaxis": {"automargin": True},
        "yaxis": {"automargin": True},
    }
    if title is not None:
        out["title"] = {"text": title, "font": {"size": TITLE_SIZE}}
    if height is not None:
        out["height"] = height
    return out


def apply_layout(fig: go.Figure, title: str | None = None, height: int | None = None) -> go.Figure:
    """Apply :func:`layout` to the ``go.Figure`` ``fig`` in place; returns ``fig``."""
    fig.update_layout({**layout(title, height), "template": TEMPLATE})  # by name: cheap
    return fig


def escape(text: object) -> str:
    """HTML-escape ``<``, ``>`` and ``&`` so plotly shows user text literally."""
    return html.escape(str(text), quote=False)


def token_labels(tokens: Sequence[object]) -> list[str]:
    """Unique, HTML-safe tick labels: ``"3·the"`` (position, middle dot, escaped token).

    Repeated tokens get distinct labels because the position is part of the label.
    """
    return [f"{i}·{escape(t)}" for i, t in enumerate(tokens)]


def weight_colors(weights: object) -> dict:
    """Colours of attention weights: 0..1 on ``SEQUENTIAL`` when none is negative (softmax,
    linear attention), else a diverging scale symmetric at 0 over their true range (the
    delta rule's implied weights are signed). Returns ``{"zmin", "zmax", "colorscale"}``
    (plus ``"zmid"`` when diverging)."""
    w = np.asarray(weights, dtype=float)
    finite = w[np.isfinite(w)]
    if not finite.size or finite.min() >= -1e-6:
        return {"zmin": 0.0, "zmax": 1.0, "colorscale": SEQUENTIAL}
    lo, hi = symmetric_range(finite)
    return {"zmin": lo, "zmax": hi, "zmid": 0.0, "colorscale": DIVERGING}


def symmetric_range(values: object) -> tuple[float, float]:
    """Symmetric colour range ``(-m, m)`` with ``m = max|finite values|`` (1.0 if none / zero)."""
    arr = np.asarray(values, dtype=float)
    finite = arr[np.isfinite(arr)]
    m = float(np.max(np.abs(finite))) if finite.size else 0.0
    if m == 0.0:
        m = 1.0
    return -m, m
