"""Figures of the encoder-decoder lesson and the translation page (viz/seq2seq.py)."""

from __future__ import annotations

import numpy as np

from lessons import nadaraya_watson as nw
from viz import fit as vfit
from viz import seq2seq as vs


def test_nadaraya_watson_figures_are_readable():
    """#20 item 6: the regression's legend sits above the plot (at plotly's default,
    right of it, it squeezed a half-width plot to ~80 px); the weights heatmap has x
    ticks, in x's units; the alignment matrix without a title has no empty band."""
    x, y = nw.toy_data(50)
    grid = np.linspace(0, 5, 60)
    pred, weights = nw.predict(grid, x, y, 0.3)
    fit = vs.kernel_regression(x, y, grid, nw.true_function(grid), pred).to_plotly_json()
    legend = fit["layout"]["legend"]
    assert legend["orientation"] == "h" and legend["y"] >= 1.0
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
