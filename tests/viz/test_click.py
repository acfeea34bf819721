"""The click layer: a point per cell of a (T, T) heatmap, on axes laid over the heatmap's."""

from __future__ import annotations

import json

import numpy as np

from tests.viz.test_attention import TOKENS, T, causal, figure
from viz import attention, spec, style
from viz.click import CLICK, add_click_layer, overlay


def test_each_cell_has_a_point_whose_customdata_is_its_query():
    w = causal(T)
    fig = figure(attention.attention_heatmap(w, TOKENS))
    heat, click = fig.data
    # text points with no text: plotly draws nothing for them, yet selects them
    assert click.name == CLICK and click.mode == "text" and click.text == ""
    rows, cols = np.divmod(np.arange(T * T), T)
    np.testing.assert_array_equal(click.customdata, rows)
    np.testing.assert_array_equal(click.y, rows)  # the query's index
    np.testing.assert_array_equal(click.x, cols)  # the key's index
    assert click.hovertext[T + 2] == f"{w[1, 2]:.3f}" and "%{hovertext}" in click.hovertemplate


def test_the_overlay_axes_sit_on_the_heatmaps_cells_and_name_them_in_the_hover():
    """Index i on the overlay is category i of the heatmap (same range); the hover's
    %{x} and %{y} read the overlay's tick text, which is the heatmap's labels."""
    fig = figure(attention.attention_heatmap(causal(T), TOKENS))
    heat, click = fig.data
    x, y = fig.layout.xaxis11, fig.layout.yaxis11
    assert (x.overlaying, y.overlaying) == ("x", "y")
    assert tuple(x.range) == tuple(fig.layout.xaxis.range) == (-0.5, T - 0.5)
    assert tuple(y.range) == tuple(fig.layout.yaxis.range) == (T - 0.5, -0.5)  # first row on top
    for axis, labels in ((x, heat.x), (y, heat.y)):
        assert list(axis.tickvals) == list(range(T)) and list(axis.ticktext) == list(labels)
        assert axis.showticklabels is False and axis.showgrid is False and axis.ticks == ""
        assert not axis.fixedrange  # zoomed with the heatmap: the points stay on their cells
    assert list(heat.x) == style.token_labels(TOKENS)
    assert "query: %{y}<br>key: %{x}" in click.hovertemplate


def test_the_layer_is_a_few_bytes_per_cell():
    """At T = 64 the layer's positions are int8 typed arrays: it was 200 kB with every
    cell's two labels, 8x the heatmap."""
    t = 64
    tokens = [f"token{i}" for i in range(t)]
    wired = spec.wired(attention.attention_heatmap(causal(t), tokens))
    heat, click = wired["data"]
    assert click["x"]["dtype"] == click["y"]["dtype"] == click["customdata"]["dtype"] == "i1"
    assert len(json.dumps(click)) < 16 * t * t  # 13 bytes: the hover text is 9


def test_overlay_ids_and_no_layer_past_max_t():
    assert (overlay("x"), overlay("y2"), overlay("x3")) == ("x11", "y12", "x13")
    fig = {"data": [], "layout": {}}
    assert add_click_layer(fig, ["a", "b", "c"], np.eye(3), max_t=2) == {"data": [], "layout": {}}
