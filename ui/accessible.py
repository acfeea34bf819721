"""Page-wide style fixes for accessibility (axe-core, ``tests/e2e/test_accessibility.py``).

Two of Streamlit's own defaults failed on the app's elements (#20 item 20):

* a slider's end labels are drawn in #9fa2aa on white (contrast 2.55, WCAG AA asks
  4.5): drawn here in the body's grey-black;
* a disabled control's label (the Temperature slider while decoding is greedy) is
  drawn in #9fa2aa too: drawn in #6b7280 (contrast 4.8), still lighter than the rest;
* a displayed formula (st.latex) is a scrollable box that the keyboard cannot reach
  when its fraction is a pixel taller than the box: it shows whole instead;
* on a phone (390 px wide) plotly's toolbar, drawn over the figure's top right corner,
  covered the heatmap's title: below 640 px it is not drawn (pinch to zoom instead;
  the PNG download stays on wider screens). Elsewhere it has a strip of its own above
  the figure (``ui.chart.STRIP_PX``): on hover it covered the title (#44 item 3);
* the page starts 3rem from the top, not 6rem: the first figure of a lecture step or
  a view is on the first screen of a 1280×720 window (#44 item 11).
"""

from __future__ import annotations

import streamlit as st

CSS = """
<style>
[data-testid="stSliderTickBar"], [data-testid="stSliderTickBar"] * { color: #374151 !important; }
[data-testid="stWidgetLabel"] p { color: inherit; }
div:has(> input:disabled), [data-testid="stWidgetLabel"]:has(~ * [disabled]) p,
[data-testid="stWidgetLabel"]:has(~ * [aria-disabled="true"]) p { color: #6b7280 !important; }
.katex-display { overflow: visible !important; }
@media (max-width: 640px) { .js-plotly-plot .modebar-container { display: none !important; } }
[data-testid="stMainBlockContainer"] { padding-top: 3rem; }
</style>
"""


def page_style() -> None:
    """Add the style fixes to this run's page (drawn nowhere: a style element only)."""
    st.html(CSS)
