"""The multi-head reshape pipeline."""

from __future__ import annotations

import re

import plotly.graph_objects as go
import pytest

from models.config import ATTENTION_KINDS
from viz import shape_flow, shapes


def test_softmax_stages():
    stages = shapes.reshape_stages(1, 5, 64, 4, 16)
    got = [s["shape"] for s in stages]
    assert got[0] == (1, 5, 64)
    assert (1, 5, 4, 16) in got
    assert (1, 4, 5, 16) in got
    assert (1, 4, 5, 5) in got
    assert got[-1] == (1, 5, 64)
    assert all(set(s) == {"step", "op", "shape", "dims", "note"} for s in stages)
    assert all(len(s["dims"]) == len(s["shape"]) for s in stages)
    assert any("softmax" in s["op"] for s in stages)


def test_linear_stages_have_state_not_t_by_t():
    stages = shapes.reshape_stages(2, 7, 32, 2, attention="linear")  # D defaults to 16
    got = [s["shape"] for s in stages]
    assert (2, 2, 16, 16) in got  # state
    assert (2, 2, 7, 7) not in got
    assert any("φ" in s["op"] for s in stages)


def test_linear_formulas_name_the_models_eps():
    """What the code divides by: phi(q_i)^T z_i + eps, with this model's eps written out."""
    stages = shapes.reshape_stages(1, 5, 64, 4, 16, attention="linear", eps=1e-4)
    by_step = {s["step"]: s for s in stages}
    assert by_step["mix values"]["op"].endswith("(φ(q_i)ᵀ z_i + ε), ε = 0.0001")
    assert "φ(q_i)ᵀ z_i + ε, ε = 0.0001" in by_step["normalizer"]["note"]


def test_errors():
    with pytest.raises(ValueError):
        shapes.reshape_stages(1, 5, 64, 3, 16)
    with pytest.raises(ValueError):
        shapes.reshape_stages(1, 0, 64, 4, 16)
    with pytest.raises(ValueError):
        shapes.reshape_stages(1, 5, 64, 4, 16, attention="flash")


def boxes_and_arrows(fig: go.Figure) -> tuple[list, list, list]:
    notes = fig.layout.annotations
    boxes = [a for a in notes if a.bordercolor is not None]
    arrows = [a for a in notes if a.showarrow]
    labels = [a for a in notes if a.bordercolor is None and not a.showarrow]
    return boxes, arrows, labels


@pytest.mark.parametrize("attention", ATTENTION_KINDS)
def test_shape_flow_draws_a_box_per_tensor_with_this_models_numbers(attention):
    stages = shapes.reshape_stages(1, 17, 64, 4, 16, attention=attention)
    fig = go.Figure(shape_flow.shape_flow_figure(stages))  # plotly.py validates the spec
    boxes, arrows, labels = boxes_and_arrows(fig)
    assert len(boxes) == len(stages) and len(arrows) == len(labels) == len(stages) - 1
    texts = [b.text for b in boxes]
    assert "(B, T, d_model) = (1, 17, 64)" in texts[0] and texts[0].startswith("<b>x")
    assert any("(B, H, T, d_head) = (1, 4, 17, 16)" in t for t in texts)
    if attention == "softmax":
        assert any("(B, H, T, T) = (1, 4, 17, 17)" in t for t in texts)
    else:
        assert any("(B, H, d_head, d_head) = (1, 4, 16, 16)" in t for t in texts)
        assert not any("17, 17)" in t for t in texts)
    assert "W_O" in labels[-1].text and "W_Q" in labels[0].text
    assert len(fig.data) == 0 and fig.layout.font.size >= 16
    # every line fits the figure at 1280 px (~100 characters; "concatenate heads (reshape
    # copies: the transposed tensor is…" ran past its edge)
    for text in [a.text for a in fig.layout.annotations]:
        assert len(re.sub("<[^>]+>", "", text)) <= 92, text


@pytest.mark.parametrize("n_stages", [9, 10, 30])
def test_shape_flow_shows_every_stage_inside_the_figure(n_stages):
    """The old table was cut off after a fixed height: now every box lies inside the
    y range, in order, each with its own STAGE_PX of the figure's height."""
    stages = shapes.reshape_stages(1, 5, 64, 4, 16, attention="linear")
    stages = (stages * 3)[:n_stages]
    fig = go.Figure(shape_flow.shape_flow_figure(stages))
    boxes, arrows, _ = boxes_and_arrows(fig)
    lo, hi = fig.layout.yaxis.range
    ys = [b.y for b in boxes]
    assert ys == sorted(ys, reverse=True) and lo < min(ys) and max(ys) < hi
    plot_px = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
    assert plot_px / (hi - lo) == pytest.approx(shape_flow.STAGE_PX)  # px per stage, any count
    for arrow, (upper, lower) in zip(arrows, zip(ys, ys[1:], strict=False), strict=True):
        assert lower < arrow.y < arrow.ay < upper  # each arrow between its two boxes


@pytest.mark.parametrize("n_stages", [9, 10])
def test_on_a_projector_the_flow_is_two_columns_half_as_tall(n_stages):
    """Presenter mode (#21): nine stages of 20 px text in one column were 786 px, past a
    1280×720 fold. In two columns every stage keeps its box, in order down each column,
    each arrow its operation (the grey notes are left to the teacher), and the second
    column starts with the arrow into its first box."""
    stages = (shapes.reshape_stages(1, 16, 128, 4, 32, attention="softmax") * 2)[:n_stages]
    one = shape_flow.shape_flow_figure(stages)
    fig = go.Figure(shape_flow.shape_flow_figure(stages, columns=2))
    boxes, arrows, labels = boxes_and_arrows(fig)
    rows = -(-n_stages // 2)
    assert len(boxes) == n_stages and len(arrows) == len(labels) == n_stages - 1
    assert [b.x for b in boxes] == [0.0] * rows + [0.5] * (n_stages - rows)
    assert [b.y for b in boxes] == [-r for r in range(rows)] + [-r for r in range(n_stages - rows)]
    lo, hi = fig.layout.yaxis.range
    assert all(lo < b.y < hi for b in boxes) and all(lo < a.ay <= hi for a in arrows)
    into_second = arrows[rows - 1]  # above the second column's first box
    assert into_second.x == 0.5 and into_second.y > boxes[rows].y
    assert not any("#6b7280" in a.text for a in labels)  # operations only
    assert fig.layout.height < 0.75 * one["layout"]["height"]


@pytest.mark.parametrize("attention", ATTENTION_KINDS)
def test_shape_flow_says_what_x_is_and_runs_in_pytorch(attention):
    """#20 item 2: x is the LayerNorm'd residual stream of the chosen layer (not the
    embedding at every layer); the merge is a reshape PyTorch runs on the transposed
    tensor; no raw TeX markup (plotly draws ``Σ_{j≤i}`` as it is)."""
    import torch

    stages = shapes.reshape_stages(2, 5, 8, 2, attention=attention, layer=1)
    fig = go.Figure(shape_flow.shape_flow_figure(stages))
    text = " ".join(a.text for a in fig.layout.annotations)
    assert "token + position embedding =" not in text and "= token + position" not in text
    assert "LayerNorm" in stages[0]["op"] and "layer 1" in stages[0]["op"]
    assert "{" not in text and "}" not in text
    merge = next(s for s in stages if s["step"] == "merge heads")["op"]
    heads = torch.zeros(2, 2, 5, 4)  # (B, H, T, d_head)
    code = merge.replace("transpose", "heads.transpose").replace("B, T, d_model", "2, 5, 8")
    merged = eval(code, {"heads": heads})  # .view here raises on a non-contiguous tensor
    assert tuple(merged.shape) == (2, 5, 8)
