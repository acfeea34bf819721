"""Attention mixing rules: softmax against PyTorch's SDPA, linear forms against each other."""

import pytest
import torch
import torch.nn.functional as F

from models.attention import (
    causal_mask,
    feature_map,
    linear_attention_parallel,
    linear_attention_readout,
    linear_attention_recurrent,
    linear_attention_states,
    merge_heads,
    softmax_attention,
    split_heads,
)


@pytest.fixture
def qkv():
    torch.manual_seed(0)
    return torch.randn(3, 2, 4, 9, 16).unbind(0)  # q, k, v: (B=2, H=4, T=9, d_head=16)


def test_softmax_matches_sdpa(qkv):
    q, k, v = qkv
    out, weights, scores = softmax_attention(q, k, v)
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert (out - ref).abs().max() <= 1e-5
    assert torch.allclose(weights.sum(-1), torch.ones(2, 4, 9), atol=1e-6)
    upper = ~causal_mask(9)
    assert (weights[..., upper] == 0).all()
    assert torch.allclose(scores, q @ k.transpose(-2, -1) / 4.0)


def test_split_and_merge_heads_roundtrip():
    x = torch.randn(2, 5, 12)  # (B, T, C)
    heads = split_heads(x, 3)
    assert heads.shape == (2, 3, 5, 4)
    assert torch.equal(heads[:, 1, :, :], x[:, :, 4:8])  # head 1 owns channels 4..7
    assert torch.equal(merge_heads(heads), x)


def test_feature_map_is_positive_elu_plus_one():
    x = torch.linspace(-8, 5, 101)
    phi = feature_map(x)
    assert (phi > 0).all()  # (in float32 elu(x) + 1 underflows to 0 only below about -17)
    assert torch.allclose(phi, torch.where(x > 0, x + 1, torch.exp(x)), atol=1e-6)


def test_linear_parallel_equals_recurrent_equals_cumsum(qkv):
    q, k, v = qkv
    par, weights, scores = linear_attention_parallel(q, k, v)
    rec, state, normalizer = linear_attention_recurrent(q, k, v)
    S, z = linear_attention_states(k, v)
    assert (par - rec).abs().max() <= 1e-5
    assert S.abs().max() > 10  # sums of T terms; still within 1e-5 absolute (measured 2e-6)
    assert (state - S).abs().max() <= 1e-5
    assert (normalizer - z).abs().max() <= 1e-5
    assert (linear_attention_readout(q, S, z) - par).abs().max() <= 1e-5


def test_linear_implied_matrix(qkv):
    q, k, v = qkv
    out, weights, scores = linear_attention_parallel(q, k, v)
    assert (weights @ v - out).abs().max() <= 1e-5
    assert torch.allclose(weights.sum(-1), torch.ones(2, 4, 9), atol=1e-5)
    assert (weights[..., ~causal_mask(9)] == 0).all()
    assert (weights >= 0).all()
    assert torch.allclose(scores, feature_map(q) @ feature_map(k).transpose(-2, -1))


def test_linear_attention_is_causal(qkv):
    q, k, v = qkv
    out, _, _ = linear_attention_parallel(q, k, v)
    v2 = v.clone()
    v2[:, :, -1] += 100.0  # changing the last value must not change earlier outputs
    out2, _, _ = linear_attention_parallel(q, k, v2)
    assert torch.allclose(out[:, :, :-1], out2[:, :, :-1])
    assert not torch.allclose(out[:, :, -1], out2[:, :, -1])
