"""Showing figures: the one place that hands figures to Streamlit.

Plain plotly specs (``viz.spec``) reach the browser as they are, never through
``go.Figure(**spec)`` (plotly.py's validation of every property, 5-60 ms a figure): they
are encoded to JSON once (orjson) and drawn by ``ui.chart``. A kept figure
(``ui.specs``) is :class:`Encoded`: its JSON already written, so it is sent without
encoding it again. The JSON is made safe in HTML as plotly.io makes it (``<``, ``>``,
``/`` and the two line separators escaped); plotly.io did it with ``str.replace`` over
the whole text, 41 ms holding the GIL for an uploaded model's heatmap at T = 1,159
(7 MB), a pause for every session (issue #25); :func:`encode` does it in paced pieces of
``PIECE_BYTES``.
Vega-Lite specs from ``viz.spec.vega_lite`` go to ``st.vega_lite_chart`` with their
Arrow datasets, which is what ``st.altair_chart`` would build on every call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import orjson
import streamlit as st
from plotly.basedatatypes import BaseFigure

from models.pieces import paced
from ui import chart, lanes, presenter
from viz import spec as vspec
from viz.present import enlarged, vega_enlarged

# What plotly.io.to_json escapes in the JSON it writes (plotly.io._json._swap_orjson);
# tests/ui/test_figures.py checks that an encoded figure is sent byte for byte as
# plotly.io sends it.
SAFE = tuple((c.encode(), f"\\u{ord(c):04x}".encode()) for c in ("<", ">", "/", "\u2028", "\u2029"))
PIECE_BYTES = 256 * 1024  # escaped per call (~0.5 ms), paced (models.pieces)


@dataclass(frozen=True, slots=True)
class Encoded:
    """A finished plotly spec as the JSON plotly.io would send (``json``: UTF-8, the
    characters of :data:`SAFE` escaped), its layout height in px (None: none set),
    which Streamlit reads for the chart's height, and where in ``json`` the layout's
    own JSON lies (``layout_at``: start and end byte). Made by :func:`encode`."""

    json: bytes
    height: int | None
    layout_at: tuple[int, int]

    def spec(self) -> vspec.Wired:
        """The spec again (a new dict at each call)."""
        return vspec.Wired(orjson.loads(self.json))

    def with_layout(self, change: Callable[[dict], dict]) -> Encoded:
        """The figure with ``change(layout)`` as its layout (a row outlined): only the
        layout is decoded and encoded again, the traces' bytes (at T = 64 the mask
        view's 200 kB) are copied as they are. ``change`` gets a new dict."""
        start, end = self.layout_at
        layout = change(orjson.loads(self.json[start:end]))
        piece = _escaped(orjson.dumps(layout, option=orjson.OPT_NON_STR_KEYS))
        return Encoded(
            self.json[:start] + piece + self.json[end:],
            layout.get("height"),
            (start, start + len(piece)),
        )


def encode(spec: dict) -> Encoded:
    """``spec`` (plain JSON: a wired spec) as :class:`Encoded`: the JSON ``orjson.dumps``
    writes for it, each top-level entry encoded on its own to know where the layout is
    (a spec without one gets an empty layout, as plotly.js reads it).

    Raises:
        TypeError: if ``spec`` holds something that is not JSON (an Arrow table).
    """
    spec = spec if "layout" in spec else {**spec, "layout": {}}
    pieces, layout_at, size = [b"{"], (0, 0), 1
    for n, (key, value) in enumerate(spec.items()):
        head = (b"," if n else b"") + orjson.dumps(key) + b":"
        raw = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
        body = b"".join(map(_escaped, paced(_cut(raw))))
        if key == "layout":
            layout_at = (size + len(head), size + len(head) + len(body))
        pieces += [head, body]
        size += len(head) + len(body)
    height = spec.get("layout", {}).get("height")
    return Encoded(b"".join([*pieces, b"}"]), height, layout_at)


def _cut(raw: bytes) -> list[bytes]:
    """``raw`` in pieces of about ``PIECE_BYTES``, each starting on an ASCII byte (no
    UTF-8 character is split, so none escapes the replacements)."""
    out, start = [], 0
    while start < len(raw):
        end = min(start + PIECE_BYTES, len(raw))
        while end < len(raw) and raw[end] >= 0x80:
            end += 1
        out.append(raw[start:end])
        start = end
    return out


def _escaped(piece: bytes) -> bytes:
    for unsafe, safe in SAFE:
        piece = piece.replace(unsafe, safe)
    return piece


# Toolbar: the camera button downloads a PNG at 2x resolution (sharp on projectors and slides);
# beside it ui/chart.js adds an SVG download. A keyed chart's files are named by its key.
PLOT_CONFIG = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 2}}


def plot_config(key: str | None) -> dict:
    """plotly.js's config for the chart keyed ``key``: :data:`PLOT_CONFIG`, its image
    files named ``attnviz_<key>`` (``newplot`` without a key, plotly's own name)."""
    if key is None:
        return PLOT_CONFIG
    image = {**PLOT_CONFIG["toImageButtonOptions"], "filename": f"attnviz_{key}"}
    return {**PLOT_CONFIG, "toImageButtonOptions": image}


@dataclass(frozen=True, slots=True)
class Drawn:
    """A figure a run drew: its chart key and either a plotly figure (``plotly``, as
    sent) or a Vega-Lite spec with Arrow datasets (``vega``)."""

    key: str | None
    plotly: Encoded | None = None
    vega: dict | None = None


_DRAWN: ContextVar[list[Drawn] | None] = ContextVar("attnviz_drawn", default=None)


@contextmanager
def collecting() -> Iterator[list[Drawn]]:
    """The figures :func:`plot` and :func:`vega_lite` draw inside the block, in page
    order (a view's own, for its HTML file: ``ui.downloads.view_files``). Only kept
    references: the figures are encoded for the page anyway."""
    drawn: list[Drawn] = []
    token = _DRAWN.set(drawn)
    try:
        yield drawn
    finally:
        _DRAWN.reset(token)


def _keep(item: Drawn) -> None:
    drawn = _DRAWN.get()
    if drawn is not None:
        drawn.append(item)


def plot(fig, key: str | None = None, on_select=None, instant_row: bool = False) -> None:
    """A plotly figure, full width, with the download toolbar (``ui.chart``: drawn once
    per change).

    Args:
        fig: a plain spec (``{"data", "layout"}``; numpy arrays are wired here), an
            :class:`Encoded` figure (``ui.specs.shown``: sent as it is) or a
            ``go.Figure`` (the lesson pages' figures).
        key: the element key (a keyed chart keeps its element across reruns).
        on_select: run when the user clicks a point with an integer ``customdata``
            (``ui.click``); the chart then needs its ``key``.
        instant_row: a clicked query's ▶ frame is drawn before the rerun
            (``viz.attention.attention_with_row`` figures).

    The figure keeps the near-black, projector-sized fonts of ``viz.style``. A figure
    still to encode (or to enlarge) is a heavy step: a run that makes way does so first
    (``ui.lanes``); an encoded one is only handed over.
    """
    if presenter.is_on() or not isinstance(fig, Encoded):
        lanes.make_way()
    if isinstance(fig, BaseFigure):
        fig = fig.to_plotly_json()
    if presenter.is_on():  # a new layout on the same traces: no computation
        spec = fig.spec() if isinstance(fig, Encoded) else fig
        fold = presenter.fold_px()  # the toolbar's strip above the figure comes off it
        fig = enlarged(spec, max_height=fold - chart.STRIP_PX if fold else None)
    if not isinstance(fig, Encoded):
        fig = encode(vspec.wired(fig))
    _keep(Drawn(key, plotly=fig))
    chart.show(fig.json, plot_config(key), key=key, on_click=on_select, instant=instant_row)


def vega_lite(spec: dict) -> None:
    """A Vega-Lite spec with Arrow datasets (``viz.spec.vega_lite``), full width.

    Streamlit moves the datasets out of its own copy of the top-level dict; a copy is
    handed over all the same, as specs are shared between sessions. Its Arrow tables
    are encoded here: a run that makes way does so first, as in :func:`plot`.
    """
    lanes.make_way()
    if presenter.is_on():  # projector-sized text (the cached spec is not changed)
        spec = vega_enlarged(spec)
    _keep(Drawn(None, vega={**spec, "datasets": dict(spec.get("datasets", {}))}))
    spec = {**spec, "datasets": dict(spec.get("datasets", {}))}
    st.vega_lite_chart(spec=spec, width="stretch")
