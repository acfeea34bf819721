"""inference.block: one block's numbers from the shipped inspect graph's block outputs."""

from __future__ import annotations

import numpy as np
import pytest

from inference.block import block_numbers, block_outputs, has_block_outputs
from inference.runtime import load_shipped
from models import contract


@pytest.fixture(scope="module")
def softmax(exported_dir):
    return load_shipped(exported_dir, "softmax")


def test_block_outputs_of_one_layer_only_when_asked(softmax):
    ids = [5, 17, 200, 3, 44]
    assert has_block_outputs(softmax)
    assert not any(contract.is_block_output(n) for n in softmax.inspect(ids))  # the default
    out = block_outputs(softmax, ids, 2)
    assert list(out) == list(contract.BLOCK_HOOKS)
    C, M = softmax.config.d_model, softmax.config.d_mlp
    assert out["resid_pre"].shape == (5, C) and out["mlp.hidden"].shape == (5, M)
    with pytest.raises(IndexError, match="layer 3"):
        block_outputs(softmax, ids, softmax.config.n_layer)


def test_block_numbers_norms_shares_and_the_residual_sum(softmax):
    nums = block_numbers(block_outputs(softmax, [5, 17, 200, 3, 44], 0))
    assert nums.T == 5
    np.testing.assert_allclose(
        nums.norms["attn.out"], np.linalg.norm(nums.tensors["attn.out"], axis=-1), rtol=1e-6
    )
    assert nums.residual_gap < 1e-4  # the block only adds
    share = nums.added_share(4)
    assert sum(share.values()) == pytest.approx(1.0, abs=1e-5)
    assert set(share) == {"resid_pre", "attn.out", "mlp.out"}
    with pytest.raises(IndexError, match="token 5"):
        nums.token(5)


def test_a_graph_without_block_outputs_says_so(softmax):
    assert not has_block_outputs(object())
    with pytest.raises(LookupError, match="no block outputs"):
        block_outputs(
            type(softmax)("x", softmax.config, softmax.tokenizer, softmax.fast_session), [1], 0
        )
