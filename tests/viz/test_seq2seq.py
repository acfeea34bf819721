"""Figures of the encoder-decoder lesson and the translation page (viz/seq2seq.py)."""

from __future__ import annotations

import numpy as np

from lessons import nadaraya_watson as nw
from viz import fit as vfit
from viz import seq2seq as vs


def test_nadaraya_watson_figures_are_readable():
    """#20 item 6: the regression's legend sits under the plot, at the figure's foot (at
    plotly's default, right of it, it squeezed a half-width plot to ~80 px; above it, in
    three lines, it ran into the title at 1280 px); the weights heatmap has x
    ticks, in x's units; the alignment matrix without a title has no empty band."""
    x, y = nw.toy_data(50)
    grid = np.linspace(0, 5, 60)
    pred, weights = nw.predict(grid, x, y, 0.3)
    fit = vs.kernel_regression(x, y, grid, nw.true_function(grid), pred).to_plotly_json()
    legend = fit["layout"]["legend"]
    assert legend["orientation"] == "h" and legend["yref"] == "container"
    assert legend["y"] == 0 and legend["yanchor"] == "bottom"
    assert fit["layout"]["margin"]["b"] >= 3 * 25 + 90  # three legend lines, the x axis
    heat = vs.kernel_weights(weights, grid, x)
    xaxis = heat.layout.xaxis
    assert xaxis.showticklabels is not False and xaxis.type == "linear"
    assert np.allclose(heat.data[0].x, x)  # the keys where they are on the x axis
    words = (np.full((3, 4), 0.25), ["a", "b", "<eos>"], list("wxyz"))
    wide = vs.alignment(*words, width_px=vfit.FULL_1280_PX).to_plotly_json()["layout"]
    assert wide["margin"]["t"] <= 40
    half = vs.alignment(*words, width_px=vfit.HALF_1280_PX).to_plotly_json()
    assert half["layout"]["margin"]["t"] <= 70  # only the colour bar above, no title band
    assert half["data"][0]["colorbar"]["orientation"] == "h"


def test_a_vector_strips_colour_bar_is_long_enough_to_read():
    """#20 item 10: the colour bar of a query / context strip lies under it, 240 px long
    (beside the 40 px strip it was 40 px long, its tick labels overlapping)."""
    fig = vs.context_vector(np.linspace(-1, 1, 128), "context").to_plotly_json()
    bar = fig["data"][0]["colorbar"]
    assert bar["orientation"] == "h" and bar["lenmode"] == "pixels"
    assert bar["len"] >= 200 and bar["thickness"] >= 12
    assert bar["nticks"] * 40 <= bar["len"]  # ≥ 40 px per label
    assert bar["tickfont"]["size"] >= 16
    # under the axis title: the margin holds the bar
    assert fig["layout"]["margin"]["b"] >= 100
