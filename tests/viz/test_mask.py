"""The causal-mask panels: scores, the mask, the masked and normalized weights."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from tests.viz.test_attention import TOKENS, T, all_text, causal, figure, heatmaps
from viz import attention, mask, style
from viz.click import CLICK, CLICK_MAX_T


def test_causal_mask_panels():
    rng = np.random.default_rng(1)
    scores = rng.uniform(-2.0, 2.0, size=(T, T))
    scores[0, 4] = -7.5  # true max |score|, above the diagonal
    w = causal(T)
    fig = figure(mask.causal_mask_panels(scores, w, TOKENS))
    s, m, a = heatmaps(fig)
    assert (s.zmin, s.zmax) == (-7.5, 7.5)
    assert s.zmid == 0.0
    assert s.colorscale == go.Heatmap(colorscale=style.DIVERGING).colorscale
    allowed = np.asarray(m.z)
    np.testing.assert_array_equal(allowed, np.tril(np.ones((T, T))))
    assert "%{z} (1 = allowed, 0 = blocked (−∞))" in m.hovertemplate  # hover reads the 0/1
    assert m.customdata is None  # no T x T hover text
    assert (a.zmin, a.zmax) == (0.0, 1.0)
    np.testing.assert_allclose(np.asarray(a.z), w)
    assert "<img" not in all_text(fig)
    with pytest.raises(ValueError):
        mask.causal_mask_panels(scores, w[:3, :3], TOKENS)


def test_causal_mask_panels_for_linear_attention_say_what_linear_does():
    rng = np.random.default_rng(2)
    scores = rng.uniform(0.1, 3.0, size=(T, T))  # phi(q) . phi(k) is positive
    fig = figure(mask.causal_mask_panels(scores, causal(T), TOKENS, attention="linear", eps=1e-5))
    s, m, _ = heatmaps(fig)
    titles = [a.text for a in fig.layout.annotations]
    assert titles[0] == "scores φ(Q)φ(K)ᵀ" and "√" not in titles[0]
    assert "softmax" not in titles[2]
    assert titles[2] == "masked ÷ (row sum + ε), ε = 1e-05"  # what the model divides by
    assert (s.zmin, s.zmax) == (0.0, pytest.approx(scores.max()))
    assert "0 = blocked (set to 0)" in m.hovertemplate
    with pytest.raises(ValueError):
        mask.causal_mask_panels(scores, causal(T), TOKENS, attention="rnn")


def test_softmax_input_panels_measure_the_mask_a_foreign_graph_put_in_its_scores():
    rng = np.random.default_rng(2)
    scores = rng.uniform(-2.0, 2.0, size=(T, T)).astype(np.float32)
    above = np.triu(np.ones((T, T), bool), 1)
    scores[above] = np.finfo(np.float32).min  # SDPA's decomposition masks with -3.4e38
    scores[0, 1] = -np.inf  # F.softmax over masked_fill(-inf)
    w = np.exp(scores - scores.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)  # (T, T): exactly 0 above the diagonal
    fig = figure(mask.softmax_input_panels(scores, w, TOKENS))
    s, m, a = heatmaps(fig)
    shown = np.asarray(s.z, dtype=float)
    assert np.isnan(shown[above]).all()  # blocked cells are blank, not -3.4e38
    np.testing.assert_allclose(shown[~above], scores[~above])
    assert s.zmax == -s.zmin == pytest.approx(np.abs(scores[~above]).max())  # finite scores
    np.testing.assert_array_equal(np.asarray(m.z), np.tril(np.ones((T, T))))  # as measured
    assert "%{z} (1 = allowed, 0 = blocked: weight 0)" in m.hovertemplate  # no T x T text
    np.testing.assert_allclose(np.asarray(a.z), w)
    titles = [t.text for t in fig.layout.annotations]
    assert titles[0] == "what the Softmax receives (mask included)"
    with pytest.raises(ValueError):
        mask.softmax_input_panels(scores, w[:3, :3], TOKENS)


def test_the_selected_query_row_is_outlined_in_all_three_panels():
    w = causal(T)
    panels = mask.causal_mask_panels(np.log(w + 1e-9), w, TOKENS, "softmax", 1e-6)
    outlined = {**panels, "layout": mask.row_outlined(panels["layout"], T, 2)}
    shapes = figure(outlined).layout.shapes
    assert [(s.xref, s.yref) for s in shapes] == [("x", "y"), ("x2", "y2"), ("x3", "y3")]
    assert all((s.y0, s.y1) == (1.5, 2.5) for s in shapes)
    assert "shapes" not in panels["layout"]
    with pytest.raises(ValueError, match="outside"):
        mask.row_outlined(panels["layout"], T, T)


def test_a_click_on_any_panels_cell_picks_its_query_and_the_layers_stay_bounded():
    """#21 item 4: each panel carries a point per cell (customdata = the query), on axes
    laid over its own, hovering the panel's value; above PANEL_CLICK_MAX_T tokens only
    the weights panel (16,384 points at most in all), above CLICK_MAX_T none."""
    w = causal(T)
    fig = mask.causal_mask_panels(np.log(w + 1e-9), w, TOKENS)
    layers = fig["data"][3:]
    assert [(c["xaxis"], c["yaxis"]) for c in layers] == [
        ("x11", "y11"),
        ("x12", "y12"),
        ("x13", "y13"),
    ]
    assert [fig["layout"][f"xaxis{n}"]["overlaying"] for n in (11, 12, 13)] == ["x", "x2", "x3"]
    assert all(len(c["x"]) == T * T for c in layers)
    assert list(layers[1]["customdata"][T : 2 * T]) == [1] * T
    assert "mask: %{hovertext}" in layers[1]["hovertemplate"] and layers[1]["hovertext"][1] == "0"
    figure(fig)  # a valid plotly figure
    for t, panels_clickable in ((mask.PANEL_CLICK_MAX_T + 1, 1), (CLICK_MAX_T + 1, 0)):
        w = causal(t)
        tokens = [f"t{i}" for i in range(t)]
        data = mask.causal_mask_panels(np.log(w + 1e-9), w, tokens)["data"]
        clicks = [c for c in data if c.get("name") == CLICK]
        assert len(clicks) == panels_clickable and sum(len(c["x"]) for c in clicks) <= 128**2
        if clicks:
            assert clicks[0]["xaxis"] == "x13"


def test_the_row_bars_make_a_clicked_key_the_query():
    fig = attention.attention_with_row(causal(T), TOKENS, query_index=3)
    bars = fig["data"][1]
    assert bars["type"] == "bar" and list(bars["customdata"]) == list(range(T))
    assert bars["unselected"]["marker"]["opacity"] == 1
