"""inference.walkthrough: one query's row, step by step, equals the heatmap's row."""

from __future__ import annotations

import numpy as np
import pytest

from inference.analysis import analyze
from inference.runtime import load_shipped
from inference.walkthrough import walkthrough
from models.config import SHIPPED_KINDS
from tests.helpers import EXPORTED

TEXT = "when Mary and John went to the store , John gave a drink to Mary ."


@pytest.fixture(scope="module", params=SHIPPED_KINDS)
def analysed(request):
    model = load_shipped(EXPORTED, request.param)
    return model, analyze(model, TEXT, recurrent=False)


def test_the_last_row_is_the_heatmap_row_and_the_output_the_head_output(analysed):
    model, result = analysed
    cfg = model.config
    attn, head_out = result.outputs["attn"], result.outputs["head_out"]  # (L, H, T, T|D)
    for layer, head, i in [(0, 0, 0), (1, 3, 5), (2, 1, result.T - 1)]:
        walk = walkthrough(result, layer, head, i, cfg.attention, cfg.attn_eps)
        assert np.abs(walk.weights - attn[layer, head, i]).max() < 1e-6
        assert np.abs(walk.output - head_out[layer, head, i]).max() < 1e-5
        assert all(values.shape == (result.T,) for _, values in walk.rows)


def test_the_mask_blocks_every_key_after_the_query(analysed):
    model, result = analysed
    cfg = model.config
    walk = walkthrough(result, 0, 0, 5, cfg.attention, cfg.attn_eps)
    masked = next(v for label, v in walk.rows if label.startswith("causal mask"))
    blocked = -np.inf if cfg.attention == "softmax" else 0.0
    assert np.all(masked[6:] == blocked) and np.all(np.isfinite(masked[:6]))
    assert np.all(walk.weights[6:] == 0)
    if cfg.attention == "softmax":
        assert walk.weights.sum() == pytest.approx(1.0)


def test_a_position_outside_the_sentence_is_refused(analysed):
    model, result = analysed
    with pytest.raises(ValueError, match="outside"):
        walkthrough(result, 0, 0, result.T, model.config.attention, model.config.attn_eps)
