"""viz.block: the transformer block's stages, drawn by viz.shapes.shape_flow_figure."""

from __future__ import annotations

import pytest

from viz.block import block_stages
from viz.shapes import shape_flow_figure


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
