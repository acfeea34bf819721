"""viz/lessons.py: the lesson figures show the arrays they are given."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

import lessons as ml
from viz import lessons as vl
from viz import style

TOKENS = ["the", "<b>cat</b>", "sat", "the"]


def _heatmaps(fig: go.Figure) -> list:
    return [t for t in fig.data if t.type == "heatmap"]


def test_beta_attention_shows_the_weights_and_beta():
    w = ml.softmax_beta(np.arange(16.0).reshape(4, 4), np.inf)
    fig = go.Figure(vl.beta_attention(w, TOKENS, np.inf, "L0 H1"))  # a plain spec: validate
    (heat,) = _heatmaps(fig)
    assert np.array_equal(np.asarray(heat.z), w)
    assert "β = ∞" in fig.layout.title.text and "L0 H1" in fig.layout.title.text
    # #44 item 8: the title names the formula's √d_head, not a √D defined nowhere
    assert "QKᵀ/√d_head" in fig.layout.title.text and "√D" not in fig.layout.title.text
    assert "1·&lt;b&gt;cat&lt;/b&gt;" in heat.x  # escaped, position-prefixed
    assert fig.layout.font.size >= 16


def test_entropy_bars_show_entropy_and_its_maximum():
    h = np.array([0.0, 0.5, 1.0, 1.2])
    fig = vl.entropy_bars(h, TOKENS, 2.0)
    assert np.allclose(fig.data[0].y, h)
    assert np.allclose(fig.data[1].y, np.log2([1, 2, 3, 4]))
    with pytest.raises(ValueError):
        vl.entropy_bars(h[:3], TOKENS, 2.0)


def test_side_by_side_panels():
    a, b = np.eye(4), -np.ones((4, 4))
    fig = vl.side_by_side([a, b, a - b], ["A", "B", "A−B"], TOKENS)
    heats = _heatmaps(fig)
    assert len(heats) == 3
    assert np.array_equal(np.asarray(heats[1].z), b)
    assert heats[1].zmin == -1 and heats[1].zmax == 1  # symmetric diverging range
    assert [a.text for a in fig.layout.annotations] == ["A", "B", "A−B"]
    # one set of row labels, on the first panel: beside the others they overlapped
    shown = [fig.layout[f"yaxis{i or ''}"].showticklabels for i in ("", 2, 3)]
    assert shown == [True, False, False]
    assert all(h.colorbar.exponentformat == "power" for h in heats)  # no "500n" ticks
    seq = vl.side_by_side([a, a], ["x", "y"], TOKENS, diverging=False)
    assert _heatmaps(seq)[0].colorscale == go.Heatmap(colorscale=style.SEQUENTIAL).colorscale
    with pytest.raises(ValueError):
        vl.side_by_side([np.eye(3)], ["x"], TOKENS)


def test_variance_figure_has_both_curves_and_references():
    fig = vl.variance_by_dim([1, 10, 100], [1.1, 9.5, 102.0], [1.1, 0.95, 1.02])
    names = [t.name for t in fig.data]
    assert names == ["q·k (random)", "q·k / √d (random)", "d", "1"]
    assert np.allclose(fig.data[0].y, [1.1, 9.5, 102.0])
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert "not the model" in fig.layout.title.text


def test_variance_figure_marks_the_measured_head():
    measured = {"d": 32, "unscaled": 250.0, "scaled": 7.8125}
    fig = vl.variance_by_dim([1, 32], [1.0, 32.0], [1.0, 1.0], measured=measured)
    dots = [t for t in fig.data if "(model)" in t.name]
    assert [t.name for t in dots] == ["this head: q·k (model)", "this head: q·k / √d (model)"]
    assert [list(t.x) for t in dots] == [[32], [32]]
    assert [t.y[0] for t in dots] == [250.0, 7.8125]


def test_flops_figure_crosses_at_t_equals_d():
    T = np.array([8, 32, 128])
    fig = vl.flops_by_length(T, 32, current_T=12)
    quad, lin, at_d, at_T = fig.data
    assert np.allclose(quad.y, 4 * T * T * 32) and np.allclose(lin.y, 4 * T * 32 * 32)
    assert quad.y[1] == lin.y[1]  # equal at T = d
    assert list(at_d.x) == [32, 32] and list(at_T.x) == [12, 12]
    assert "T = 12" in at_T.name


def test_singular_values_bar_marks_d_head():
    sv = np.array([3.0, 2.0, 1e-17, 0.0])
    fig = vl.singular_values_bar(sv, 2)
    bar = fig.data[0]
    assert np.allclose(bar.y[:2], [3.0, 2.0]) and (np.asarray(bar.y) > 0).all()  # log-safe
    assert list(bar.marker.color[:2]) == [style.BAR_COLOR] * 2
    assert fig.layout.shapes[0].x0 == 1.5


def test_parameter_bars():
    from models.config import ModelConfig

    counts = ml.head_parameter_counts(ModelConfig(vocab_size=100))
    fig = vl.parameter_bars(counts)
    bar = fig.data[0]
    assert list(bar.x) == [
        counts[k] for k in ("q", "k", "v", "o", "per_head", "all_heads", "model")
    ]
    assert bar.y[-1] == "whole model"
