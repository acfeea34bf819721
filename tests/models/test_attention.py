"""Attention mixing rules: softmax against PyTorch's SDPA, linear forms against each other,
the registry and the feature-map object (one phi for torch and numpy)."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from models.attention import (
    ATTENTION_REGISTRY,
    LinearAttention,
    MultiHeadAttention,
    SoftmaxAttention,
    build_mixing,
    causal_mask,
    merge_heads,
    split_heads,
)
from models.config import ATTENTION_KINDS, ModelConfig
from models.contract import inspect_outputs
from models.feature_maps import FEATURE_MAPS, elu_feature_map

CFG = ModelConfig(vocab_size=10, attention="linear", attn_eps=1e-6)
LINEAR = LinearAttention(CFG)
SOFTMAX = SoftmaxAttention(ModelConfig(vocab_size=10))


@pytest.fixture
def qkv():
    torch.manual_seed(0)
    return torch.randn(3, 2, 4, 9, 16).unbind(0)  # q, k, v: (B=2, H=4, T=9, d_head=16)


def test_softmax_matches_sdpa(qkv):
    q, k, v = qkv
    out, weights, scores = SOFTMAX.parallel(q, k, v)
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
    phi = elu_feature_map.torch(x)
    assert (phi > 0).all()  # (in float32 elu(x) + 1 underflows to 0 only below about -17)
    assert torch.allclose(phi, F.elu(x) + 1, atol=1e-6)
    assert phi.dtype == x.dtype and phi.shape == x.shape


def test_feature_map_torch_and_numpy_are_one_function():
    """The numpy method (the kernel lesson's) and the torch method (the model's) agree to
    float32 rounding, tiny phi values included (where elu(x) + 1 would cancel)."""
    x = torch.cat([torch.linspace(-30, 30, 601), torch.tensor([0.0, -1e-8, 1e-8])])
    ours = elu_feature_map.torch(x).double().numpy()
    np.testing.assert_allclose(ours, elu_feature_map.numpy(x.numpy()), rtol=1e-6)
    assert elu_feature_map.numpy(np.array([-30.0]))[0] == pytest.approx(np.exp(-30.0))
    assert FEATURE_MAPS["elu"] is elu_feature_map and LINEAR.feature_map is elu_feature_map


def test_registry_covers_every_kind_and_the_contract():
    """A mixing rule for every kind a config accepts; the recurrent ones (a step graph) are
    the ones whose inspect graph names a state."""
    assert tuple(ATTENTION_REGISTRY) == ATTENTION_KINDS
    for kind in ATTENTION_KINDS:
        mixing = build_mixing(ModelConfig(vocab_size=10, attention=kind))
        assert isinstance(mixing, ATTENTION_REGISTRY[kind])
        assert mixing.recurrent == ("state" in inspect_outputs(kind))


def test_multi_head_attention_uses_the_registered_rule(qkv):
    """The module's output is the registered rule's on its own projections."""
    torch.manual_seed(1)
    for kind in ATTENTION_KINDS:
        attn = MultiHeadAttention(ModelConfig(vocab_size=10, attention=kind, d_model=16, n_head=2))
        x = torch.randn(2, 5, 16)  # (B, T, C)
        out, cache = attn.eval()(x, inspect=True)
        gates = {"beta": attn.beta(x)} if attn.short_conv else {}  # DeltaNet's beta
        y, _, _ = attn.mixing.parallel(*attn.qkv(x), **gates)  # (B, H, T, d_head)
        assert torch.allclose(out, attn.o_proj(merge_heads(y)), atol=1e-6)
        assert torch.allclose(attn(x), out, atol=1e-5)  # the fast form gives the same


def test_linear_parallel_equals_recurrent_equals_cumsum(qkv):
    q, k, v = qkv
    par, weights, scores = LINEAR.parallel(q, k, v)
    rec, state, normalizer = LINEAR.recurrent_loop(q, k, v)
    S, z = LINEAR.states(k, v)
    assert (par - rec).abs().max() <= 1e-5
    assert S.abs().max() > 10  # sums of T terms; still within 1e-5 absolute (measured 2e-6)
    assert (state - S).abs().max() <= 1e-5
    assert (normalizer - z).abs().max() <= 1e-5
    assert (LINEAR.readout(q, S, z) - par).abs().max() <= 1e-5


def test_linear_implied_matrix(qkv):
    q, k, v = qkv
    out, weights, scores = LINEAR.parallel(q, k, v)
    assert (weights @ v - out).abs().max() <= 1e-5
    assert torch.allclose(weights.sum(-1), torch.ones(2, 4, 9), atol=1e-5)
    assert (weights[..., ~causal_mask(9)] == 0).all()
    assert (weights >= 0).all()
    phi = elu_feature_map.torch
    assert torch.allclose(scores, phi(q) @ phi(k).transpose(-2, -1))


def test_linear_attention_is_causal(qkv):
    q, k, v = qkv
    out, _, _ = LINEAR.parallel(q, k, v)
    v2 = v.clone()
    v2[:, :, -1] += 100.0  # changing the last value must not change earlier outputs
    out2, _, _ = LINEAR.parallel(q, k, v2)
    assert torch.allclose(out[:, :, :-1], out2[:, :, :-1])
    assert not torch.allclose(out[:, :, -1], out2[:, :, -1])
