"""Figures that draw with no network: plotly.js (and Vega) inlined in every figure a
notebook shows.

plotly's notebook renderers load plotly.js from a CDN (``notebook_connected``, ``colab``,
``iframe_connected``), through require.js (``notebook``: classic Jupyter only) or a
JupyterLab extension (``plotly_mimetype``), and its HTML renderers add MathJax from a CDN.
The renderer here, ``attnviz``, writes each figure as one ``text/html`` output that holds
plotly.js itself (about 4.7 MB a figure) and no ``<script src=...>``: Jupyter Notebook,
JupyterLab, VS Code and Colab draw it offline, hover and all, and a saved notebook still
draws it after a reload. :func:`use` makes it plotly's default (``import attnviz`` does).

Altair's default renderer, likewise, loads Vega from a CDN; :func:`use` switches it to its
``html`` renderer with the ``inline`` template: Vega, Vega-Lite and vega-embed inlined
(about 0.9 MB a chart), the bundle taken from ``vl-convert-python``, offline.
"""

from __future__ import annotations

import altair as alt
import plotly.io as pio
from plotly.io._base_renderers import MimetypeRenderer

NAME = "attnviz"
CONFIG = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 2}}


class OfflineRenderer(MimetypeRenderer):
    """plotly's renderer interface: a figure (plain dict) -> ``{"text/html": html}``,
    plotly.js inlined, no MathJax, the app's toolbar (PNG at 2x)."""

    def to_mimebundle(self, fig_dict: dict) -> dict[str, str]:
        html = pio.to_html(
            fig_dict,
            config=CONFIG,
            include_plotlyjs=True,
            include_mathjax=False,
            full_html=False,
            default_width="100%",
            validate=False,
        )
        return {"text/html": html}


def use() -> None:
    """Register the ``attnviz`` renderer and make it plotly's default (``fig.show()``
    then draws offline), and Altair's charts inlined likewise.
    ``plotly.io.renderers.default = "..."`` and ``altair.renderers.enable(...)`` choose
    others."""
    pio.renderers[NAME] = OfflineRenderer()
    pio.renderers.default = NAME
    alt.renderers.enable("html", template="inline")
