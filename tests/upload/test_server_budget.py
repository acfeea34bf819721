"""An uploaded model's analysis in the server is bounded by its cost (issue #25 item 3):
the sentence is cut to the longest T whose inspect outputs fit the budget, with one notice."""

from __future__ import annotations

import numpy as np
import pytest

from inference.analysis import analyze
from models.config import ModelConfig
from tests.helpers import EXPORTED
from upload import memory
from upload.limits import SERVER_ANALYSIS_VALUES
from upload.sizes import activation_elements, largest_T


@pytest.mark.parametrize("layers, heads, context", [(2, 4, 64), (6, 8, 2048), (12, 12, 1024)])
def test_largest_T_is_the_longest_sentence_that_fits(layers, heads, context):
    cfg = ModelConfig(
        vocab_size=5000, n_layer=layers, n_head=heads, d_model=64 * heads, d_mlp=256 * heads,
        context_length=context,
    )  # fmt: skip
    T = largest_T(cfg, SERVER_ANALYSIS_VALUES)
    assert 1 <= T <= context
    assert activation_elements(cfg, T) <= SERVER_ANALYSIS_VALUES
    assert T == context or activation_elements(cfg, T + 1) > SERVER_ANALYSIS_VALUES
    if (layers, heads, context) == (6, 8, 2048):  # the long-context upload
        assert T < 1000


def test_an_analysis_past_the_budget_is_cut_with_one_notice():
    from inference.runtime import load_shipped

    model = load_shipped(EXPORTED, "softmax")
    text = "the cat sat on the mat and the dog sat on the old tree"
    full = analyze(model, text, recurrent=False)
    cut = analyze(model, text, recurrent=False, max_tokens=5)
    assert cut.T == 5 and cut.ids == full.ids[:5]
    (notice,) = [n for n in cut.notices if "uploaded model" in n]
    assert f"{full.T} tokens" in notice and "at most 5" in notice and "\n" not in notice
    assert np.allclose(cut.outputs["attn"], full.outputs["attn"][..., :5, :5], atol=1e-5)  # causal
    assert analyze(model, text, recurrent=False, max_tokens=10_000).ids == full.ids
    ctx = model.config.context_length
    assert analyze(model, text, recurrent=False, max_tokens=ctx).notices == full.notices


def test_trim_hands_pages_back_or_says_it_cannot():
    assert memory.trim() in (True, False)
