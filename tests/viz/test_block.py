"""viz.block: the transformer block's stages, drawn by viz.shape_flow.shape_flow_figure."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from viz.block import block_stages, contributions_figure, token_sum_figure
from viz.shape_flow import shape_flow_figure


def test_the_residual_stream_keeps_its_shape_and_the_mlp_widens():
    stages = block_stages(1, 16, 128, 256, 4, "softmax")
    assert stages[0]["shape"] == stages[-1]["shape"] == (1, 16, 128)
    hidden = next(s for s in stages if s["step"] == "MLP hidden")
    assert hidden["shape"] == (1, 16, 256) and hidden["dims"] == ("B", "T", "d_mlp")
    assert "4 heads × d_head 32" in stages[2]["op"]
    fig = shape_flow_figure(stages, title="block")
    texts = [a["text"] for a in fig["layout"]["annotations"]]
    assert any("(B, T, d_mlp) = (1, 16, 256)" in t for t in texts)
    assert not any("token + position embedding" in t for t in texts)  # not the model's input


def test_bad_sizes_are_refused():
    with pytest.raises(ValueError, match="not divisible"):
        block_stages(1, 4, 130, 256, 4)
    with pytest.raises(ValueError, match="T must be"):
        block_stages(1, 0, 128, 256, 4)


def test_norms_go_into_the_boxes_and_must_be_one_per_stage():
    stages = block_stages(1, 4, 8, 16, 2, "linear", norms=tuple(range(8)))
    texts = [a["text"] for a in shape_flow_figure(stages)["layout"]["annotations"]]
    assert sum("‖x‖ = 7.00" in t for t in texts) == 1
    with pytest.raises(ValueError, match="7 norms for 8 stages"):
        block_stages(1, 4, 8, 16, 2, norms=tuple(range(7)))


def _norms(T: int) -> dict:
    rng = np.random.default_rng(0)
    return {h: rng.random(T) for h in ("resid_pre", "attn.out", "mlp.out", "resid_post")}


def test_contributions_figure_labels_every_token_and_shades_the_chosen_one():
    tokens = ["a", "<b>", "a", "c"]
    fig = contributions_figure(_norms(4), tokens, 2, 1)
    go.Figure(fig)  # a valid plotly figure
    bars = [d for d in fig["data"] if d["type"] == "bar"]
    assert [b["name"].split()[0] for b in bars] == ["attention", "MLP"]
    assert fig["layout"]["xaxis"]["ticktext"] == ["0·a", "1·&lt;b&gt;", "2·a", "3·c"]
    shade = fig["layout"]["shapes"][0]
    assert (shade["x0"], shade["x1"]) == (1.5, 2.5)
    assert all(d["customdata"] == [0, 1, 2, 3] for d in fig["data"])  # click -> token
    with pytest.raises(ValueError, match="token in 0..3"):
        contributions_figure(_norms(4), tokens, 4, 1)


def test_token_sum_figure_rows_are_in_attention_mlp_out():
    vec = {h: np.full(6, v, np.float32) for h, v in
           (("resid_pre", 1.0), ("attn.out", 2.0), ("mlp.out", -0.5), ("resid_post", 2.5))}  # fmt: skip
    fig = token_sum_figure(vec, "<x>", 0)
    go.Figure(fig)
    heat = fig["data"][0]
    assert heat["z"].shape == (4, 6) and heat["zmin"] == -heat["zmax"] == -2.5
    assert heat["y"][0].startswith("residual in") and heat["y"][3].startswith("= residual out")
    assert "&lt;x&gt;" in fig["layout"]["title"]["text"]
    with pytest.raises(ValueError, match=r"\(C,\) each"):
        token_sum_figure({**vec, "mlp.out": np.zeros(5)}, "x", 0)
