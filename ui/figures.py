"""Showing figures: the one place that hands figures to Streamlit.

Plain plotly specs (``viz.spec``) reach the browser as they are: ``st.plotly_chart``
would run a dict through ``go.Figure(**spec)`` (plotly.py's validation of every
property, 5-60 ms a figure) and a ``go.Figure`` through ``to_dict()`` (a deep
copy); a spec here goes in as an already-built figure whose ``to_dict()`` is the
spec itself, so Streamlit only encodes it to JSON (with orjson when installed).
Vega-Lite specs from ``viz.spec.vega_lite`` go to ``st.vega_lite_chart`` with their
Arrow datasets, which is what ``st.altair_chart`` would build on every call.
"""

from __future__ import annotations

import streamlit as st
from plotly.basedatatypes import BaseFigure

from ui import presenter
from viz import spec as vspec
from viz.present import enlarged

# Toolbar: the camera button downloads a PNG at 2x resolution (sharp on projectors and slides).
PLOT_CONFIG = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 2}}


class Prebuilt(BaseFigure):
    """A finished spec that plotly.py's tools take as an already validated figure.

    ``BaseFigure.__init__`` (which validates every property) is not run: the only
    use of this object is ``to_dict()``, which returns the spec it holds.
    """

    def __init__(self, spec: dict) -> None:  # no BaseFigure.__init__: nothing to validate
        self._spec = spec  # BaseFigure lets names starting with "_" through

    def to_dict(self) -> dict:
        """The spec (plain JSON types; Streamlit encodes it, nothing modifies it)."""
        return self._spec


def plot(fig, key: str | None = None, on_select=None) -> None:
    """A plotly figure, full width, with the download toolbar.

    Args:
        fig: a plain spec (``{"data", "layout"}``; numpy arrays are wired here, a
            wired spec from ``ui.specs`` passes through unchanged and unmodified) or a
            ``go.Figure`` (the lesson pages' figures, sent the usual way).
        key: the element key.
        on_select: a callback run when the user clicks a point (``ui.click``); the
            chart then needs its ``key``.

    ``theme=None``: the figure keeps the near-black, projector-sized fonts of
    ``viz.style`` instead of Streamlit's grey theme.
    """
    if presenter.is_on():  # a new layout on the same traces: no computation
        spec = fig if isinstance(fig, dict) else fig.to_plotly_json()
        fig = enlarged(spec)
    if isinstance(fig, dict):
        fig = Prebuilt(vspec.wired(fig))
    if on_select is None:
        st.plotly_chart(fig, config=PLOT_CONFIG, key=key, theme=None)
        return
    st.plotly_chart(fig, config=PLOT_CONFIG, key=key, theme=None, on_select=on_select,
                    selection_mode="points")  # fmt: skip


def vega_lite(spec: dict) -> None:
    """A Vega-Lite spec with Arrow datasets (``viz.spec.vega_lite``), full width.

    Streamlit moves the datasets out of its own copy of the top-level dict; a copy is
    handed over all the same, as specs are shared between sessions.
    """
    st.vega_lite_chart(spec={**spec, "datasets": dict(spec.get("datasets", {}))}, width="stretch")
