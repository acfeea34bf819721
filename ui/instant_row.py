"""A clicked cell's row drawn in the browser at once, before the server's rerun.

Clicking a cell of the attention heatmap makes its row the query (``ui.click``): the
server reruns and Streamlit 1.67 redraws the chart, the whole figure three times, which
the browser painted 400-600 ms after the click (README, #21). The figure already holds
every query's row bars as its ▶ play frames (``viz.attention.attention_with_row``,
frame ``i`` = query ``i``), computed from the model by the server. This component's
script listens for ``plotly_click`` on the chart and shows the clicked query's frame
itself (``Plotly.update`` of the bars, their outline and title: about 70 ms of
plotly.js); the rerun that follows draws the same row, and updates the Query token
control and the walk-through.

A clicked point's ``customdata`` is the query it picks: the row for a cell of the click
layer (``viz.click.add_click_layer``), the key for a bar (a bar makes its key the
query). A figure without frames (more than ``viz.play.MAX_FRAMES`` tokens, presenter
mode's heatmap alone) is left to the rerun.
"""

from __future__ import annotations

import streamlit as st

JS = """
export default function(component) {
  const chart = component.data.chart;
  const hook = () => {
    const gd = document.querySelector(`.st-key-${chart} .js-plotly-plot`);
    if (!gd || gd.__instantRow || typeof gd.on !== "function") return;
    gd.__instantRow = true;
    gd.on("plotly_click", (event) => {
      const frames = (gd._transitionData || {})._frames || [];
      const point = (event.points || []).find((p) => Number.isInteger(p.customdata));
      const frame = point && frames.find((f) => f.name === String(point.customdata));
      if (!frame || !window.Plotly) return;
      const restyle = {};  // the frame's trace attributes, one trace per list
      for (const [name, value] of Object.entries(frame.data[0])) {
        if (name !== "type") restyle[name] = [value];
      }
      // after Streamlit's own click and selection handlers (which send the rerun)
      queueMicrotask(() => window.Plotly.update(gd, restyle, frame.layout || {}, frame.traces));
    });
  };
  hook();
  const watch = new MutationObserver(hook);  // Streamlit may mount a new chart element
  watch.observe(document.body, {childList: true, subtree: true});
  return () => watch.disconnect();
}
"""
_component = st.components.v2.component("attnviz_instant_row", js=JS)


def mount(chart_key: str) -> None:
    """Draw a clicked query's row in the browser at once on the chart ``chart_key`` (an
    ``attention_with_row`` figure shown with ``ui.click.on_click``). Draws nothing."""
    box = f"instant_row_{chart_key}"
    with st.container(key=box):  # out of the page's flow: no gap under the chart
        st.html(f"<style>.st-key-{box} {{ display: none; }}</style>")
        _component(key=f"instant_row_of_{chart_key}", data={"chart": chart_key})
