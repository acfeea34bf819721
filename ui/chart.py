"""A plotly chart that the browser draws once per change: a Streamlit v2 component.

``st.plotly_chart`` (Streamlit 1.67) computes its element id from the figure, so every
new figure is a new element: the browser unmounted the chart, drew the new one, then
drew it once or twice more as its React state settled (three ``plotly_afterplot`` per
change, whatever the width mode, theme or key). A head click painted 250-750 ms after the
click, the main thread busy with those redraws (README, bench browser rows). This
component keeps its element (its id is its key) and calls ``Plotly.react`` once per new
figure (``ui/chart.js``); a figure equal to the one drawn is not drawn again.

plotly.js is the one Streamlit ships (its ``PlotlyChart`` chunk sets ``window.Plotly``):
the same version as its own charts, served by the same server, cached by the browser.
``tests/test_library_surfaces.py`` names the chunk as a private part of Streamlit.

A click on a point whose ``customdata`` is an integer (``viz.click``'s layer: the query
of a cell; a bar's key) is sent back as the trigger value ``click``; ``instant`` also
draws that query's ▶ frame at once, before the rerun (``viz.attention.attention_with_row``
keeps each query's row bars as frame ``i``). Likewise a head picked in the sidebar's Head
list is drawn at once from a figure that carries the layer's other heads
(``viz.attention.with_heads``, the figure's top-level ``heads``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
import streamlit as st

from ui import presenter

COMPONENT = "attnviz_chart"
# one module: ▶ play (player.js), the first paint of bars (preview.js), square cells
# (square.js), then the chart (chart.js)
JS = "\n".join(
    Path(__file__).with_name(n).read_text()
    for n in ("player.js", "preview.js", "square.js", "chart.js")
)
_STATIC_JS = Path(st.__file__).parent / "static" / "static" / "js"


def plotly_chunk() -> str:
    """The file name of Streamlit's ``PlotlyChart`` chunk (it sets ``window.Plotly``),
    beside the app's own scripts in ``static/js/``.

    Raises:
        RuntimeError: when this Streamlit ships no such chunk (one newer than 1.67 may
            not): say so, and check ``ui/chart.js`` against it.
    """
    found = sorted(_STATIC_JS.glob("PlotlyChart.*.js"))
    if len(found) != 1:
        raise RuntimeError(
            f"Streamlit {st.__version__} ships {len(found)} PlotlyChart.*.js chunks in "
            f"{_STATIC_JS}, not one: ui/chart.js loads plotly.js from it (checked on 1.67)"
        )
    return found[0].name


# Fullscreen (the toolbar's button): the chart on white, in the middle of the screen.
# plotly's toolbar has a strip of its own above a figure with traces: on hover, over the
# figure's top right corner, it covered the title (#44 item 3). A diagram of text boxes
# (viz.shape_flow) keeps its title in a tall top margin, clear of the toolbar.
STRIP_PX = 26
CSS = (
    ".attnviz-host:fullscreen { background: #fff; overflow: auto; display: flex;"
    " justify-content: center; align-items: center; }"
    " .attnviz-chart:focus-visible { outline: 3px solid #1d4ed8; outline-offset: 2px; }"
    f" .attnviz-strip {{ padding-top: {STRIP_PX}px; }}"
    f" .attnviz-strip .modebar-container {{ top: -{STRIP_PX}px !important; }}"
)
_component = st.components.v2.component(COMPONENT, js=JS, css=CSS, isolate_styles=False)
CHUNK = plotly_chunk()


def payload(
    figure_json: bytes, config: dict, clicks: bool, instant: bool, present: bool = False
) -> bytes:
    """The bytes the component gets: ``{"chunk", "config", "clicks", "instant", "present",
    "figure"}`` as JSON, the figure's own JSON spliced in as it is (not parsed); ``present``:
    the session presents (a square figure then fits under what is above it)."""
    head = orjson.dumps(
        {"chunk": CHUNK, "config": config, "clicks": clicks, "instant": instant, "present": present}
    )
    return head[:-1] + b',"figure":' + figure_json + b"}"


def show(
    figure_json: bytes,
    config: dict,
    key: str | None = None,
    on_click: Callable[[], None] | None = None,
    instant: bool = False,
) -> None:
    """Draw a plotly figure (its JSON: ``{"data", "layout", "frames"?}``), full width,
    its height the layout's (plotly's 450 px when it sets none).

    Args:
        figure_json: the figure as UTF-8 JSON.
        config: plotly.js's config (the toolbar).
        key: the element key; with it the chart keeps its element across reruns (drawn
            once per change), and ``st.session_state[key]["click"]`` is its last click.
        on_click: run when a point with an integer ``customdata`` is clicked
            (``{"customdata": int}`` under ``click``); needs ``key``.
        instant: draw the clicked query's ▶ frame at once (``attention_with_row``).
    """
    data = payload(figure_json, config, on_click is not None, instant, presenter.is_on())
    if on_click is None:
        _component(key=key, data=data)
        return
    _component(key=key, data=data, on_click_change=on_click)


def clicked(state) -> int | None:
    """The ``customdata`` of the last clicked point in a chart's state (the value of its
    key in ``st.session_state``), or None."""
    click = (state or {}).get("click") if hasattr(state, "get") else None
    value = (click or {}).get("customdata")
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
