"""models/lessons.py: soft/hard attention, scoring functions, kernels, merged forms."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from models import lessons as ml
from models.config import ModelConfig

RNG = np.random.default_rng(0)


def _scores(T: int = 7) -> np.ndarray:
    return RNG.normal(0, 2, (T, T))  # (T, T)


def _check_causal_rows(w: np.ndarray) -> None:
    assert np.allclose(w.sum(axis=1), 1.0)
    assert np.all(w[np.triu_indices(w.shape[0], 1)] == 0)
    assert np.all(w >= 0)


@pytest.mark.parametrize("beta", [0.0, 0.3, 1.0, 5.0, 1e6, np.inf])
def test_softmax_beta_rows_are_causal_distributions(beta):
    w = ml.softmax_beta(_scores(), beta)
    assert np.isfinite(w).all()
    _check_causal_rows(w)


def test_beta_zero_is_uniform_over_allowed_keys():
    w = ml.softmax_beta(_scores(6), 0.0)
    for i in range(6):
        assert np.allclose(w[i, : i + 1], 1 / (i + 1))
    assert np.allclose(ml.row_entropy(w), np.log(np.arange(1, 7)))


def test_beta_inf_is_one_hot_at_the_causal_argmax():
    s = _scores(8)
    s[3, 5] = 1e9  # above the diagonal: must be ignored
    w = ml.softmax_beta(s, np.inf)
    for i in range(8):
        j = int(np.argmax(s[i, : i + 1]))
        expected = np.zeros(8)
        expected[j] = 1.0
        assert np.array_equal(w[i], expected)
    assert np.allclose(ml.row_entropy(w), 0.0)
    assert np.allclose(ml.softmax_beta(s, 1e6), w, atol=1e-6)  # the limit agrees


def test_beta_one_is_the_ordinary_causal_softmax():
    s = _scores(5)
    masked = np.where(np.tril(np.ones((5, 5), bool)), s, -np.inf)
    e = np.exp(masked - masked.max(1, keepdims=True))
    assert np.allclose(ml.softmax_beta(s, 1.0), e / e.sum(1, keepdims=True))


def test_entropy_falls_as_beta_grows():
    s = _scores(10)
    h = [ml.row_entropy(ml.softmax_beta(s, b)).sum() for b in (0, 0.5, 1, 2, 4, 16, np.inf)]
    assert all(a >= b - 1e-12 for a, b in zip(h, h[1:], strict=False))


@pytest.mark.parametrize("beta", [-1.0, np.nan])
def test_bad_beta_raises(beta):
    with pytest.raises(ValueError):
        ml.softmax_beta(_scores(), beta)


def test_additive_scores_match_the_formula():
    q, k = RNG.normal(size=(4, 3)), RNG.normal(size=(5, 3))
    W_q, W_k, w = ml.random_additive_params(3, hidden=6, seed=1)
    s = ml.additive_scores(q, k, W_q, W_k, w)
    assert s.shape == (4, 5)
    assert np.isclose(s[2, 4], w @ np.tanh(W_q @ q[2] + W_k @ k[4]))


def test_dot_product_scaling():
    q, k = RNG.normal(size=(4, 16)), RNG.normal(size=(4, 16))
    raw = ml.dot_product_scores(q, k, scaled=False)
    assert np.allclose(raw, q @ k.T)
    assert np.allclose(ml.dot_product_scores(q, k), raw / 4.0)


def test_score_variance_is_d_unscaled_and_one_scaled():
    dims = (1, 4, 16, 64, 256)
    var = ml.score_variance_by_dim(dims, n_samples=20000, seed=0)
    assert np.allclose(var["unscaled"] / np.array(dims), 1.0, rtol=0.1)
    assert np.allclose(var["scaled"], 1.0, rtol=0.1)


def test_kernels():
    q, k = RNG.normal(size=(6, 4)), RNG.normal(size=(6, 4))
    sims = ml.kernel_similarities(q, k)
    assert np.allclose(sims["exp"], np.exp(q @ k.T / 2.0))
    phi = lambda x: np.where(x > 0, x + 1, np.exp(x))  # noqa: E731
    assert np.allclose(sims["phi"], phi(q) @ phi(k).T)
    assert (sims["phi"] > 0).all()
    # normalizing the exp kernel under the causal mask is softmax attention
    attn = ml.causal_normalize(sims["exp"])
    assert np.allclose(attn, ml.softmax_beta(ml.dot_product_scores(q, k), 1.0))


def test_linear_reordering_is_exact_and_cheaper():
    T, d = 64, 8
    q, k, v = (RNG.normal(size=(T, d)) for _ in range(3))
    check = ml.linear_reorder_check(q, k, v)
    assert check["quadratic"].shape == (T, d)
    assert check["max_abs_diff"] <= 1e-5
    assert check["flops_quadratic"] / check["flops_linear"] == T / d
    assert ml.reorder_flops(T, d) == {"quadratic": 4 * T * T * d, "linear": 4 * T * d * d}


def _random_weights(C: int, L: int, bias: bool = True) -> dict[str, np.ndarray]:
    w = {}
    for layer in range(L):
        for part in "qkvo":
            w[f"blocks.{layer}.attn.{part}_proj.weight"] = RNG.normal(size=(C, C))
            if bias:
                w[f"blocks.{layer}.attn.{part}_proj.bias"] = RNG.normal(size=C)
    return w


@pytest.mark.parametrize("bias", [True, False])
def test_merged_qk_reproduces_biased_scores(bias):
    C, H, T = 12, 3, 5
    D = C // H
    w = _random_weights(C, 2, bias)
    x = RNG.normal(size=(T, C))
    for head in range(H):
        rows = slice(head * D, (head + 1) * D)
        q = x @ w["blocks.1.attn.q_proj.weight"][rows].T  # (T, D)
        k = x @ w["blocks.1.attn.k_proj.weight"][rows].T  # (T, D)
        if bias:
            q, k = (
                q + w["blocks.1.attn.q_proj.bias"][rows],
                k + w["blocks.1.attn.k_proj.bias"][rows],
            )
        W_QK = ml.merged_qk(w, 1, head, H)
        assert W_QK.shape == (C + 1, C + 1)
        assert np.allclose(ml.merged_scores(x, W_QK, D), q @ k.T / np.sqrt(D))
        sv = ml.singular_values(W_QK)
        assert ml.numerical_rank(sv, W_QK.shape) == D


def test_merged_ov_is_the_heads_write():
    C, H = 12, 3
    D = C // H
    w = _random_weights(C, 1, bias=False)
    x = RNG.normal(size=(5, C))
    head = 2
    v = x @ w["blocks.0.attn.v_proj.weight"][head * D : (head + 1) * D].T  # (T, D)
    merged_heads = np.zeros((5, C))
    merged_heads[:, head * D : (head + 1) * D] = v  # other heads silent
    out = merged_heads @ w["blocks.0.attn.o_proj.weight"].T  # (T, C)
    W_OV = ml.merged_ov(w, 0, head, H)
    assert np.allclose(x @ W_OV, out)
    assert ml.numerical_rank(ml.singular_values(W_OV), W_OV.shape) <= D


def _with_weights(model, torch_model):
    model.weights = {k: v.detach().numpy() for k, v in torch_model.state_dict().items()}
    return model


def _check_model_scores(model, text: str = "the cat sat on the mat .") -> None:
    from models.analysis import analyze

    cfg = model.config
    out = analyze(model, text).outputs
    for layer in range(cfg.n_layer):
        for head in range(cfg.n_head):
            W_QK = ml.merged_qk(model.weights, layer, head, cfg.n_head)
            merged = ml.merged_scores(out["attn_in"][layer], W_QK, cfg.d_head)
            ref = ml.reference_scores(out, layer, head, cfg.attention)
            assert np.abs(merged - ref).max() <= 1e-4
            assert ml.numerical_rank(ml.singular_values(W_QK), W_QK.shape) <= cfg.d_head


@pytest.mark.parametrize("kind", ["softmax", "linear"])
def test_merged_scores_match_an_exported_model(tiny_exports, kind):
    from models.runtime import load_shipped

    torch_model, folder = tiny_exports[kind]
    _check_model_scores(_with_weights(load_shipped(folder, kind), torch_model))


@pytest.mark.parametrize("kind", ["softmax", "linear"])
def test_merged_scores_match_the_shipped_model(exported_dir: Path, kind):
    from models.runtime import load_shipped

    model = load_shipped(exported_dir, kind)
    if model.weights is None:
        pytest.skip(f"exported/ has no {kind}.safetensors checkpoint")
    _check_model_scores(model, "when Mary and John went to the store , John gave a drink to Mary .")


@pytest.mark.parametrize(
    "overrides",
    [{}, {"bias": False, "ln_bias": False}, {"pos_enc": "learned", "tie_weights": False}],
)
def test_parameter_counts_match_the_pytorch_model(overrides):
    from models.transformer import Transformer

    cfg = ModelConfig(vocab_size=50, n_layer=2, n_head=4, d_model=32, d_mlp=48, **overrides)
    counts = ml.head_parameter_counts(cfg)
    assert counts["model"] == Transformer(cfg).num_parameters()
    bias = 8 * 3 if cfg.bias else 0
    assert counts["qkv"] == 32 * (2 * 8 + 8) + bias
    assert counts["per_head"] == counts["qkv"] + 8 * 32
    assert counts["q"] * cfg.n_head == 32 * 32 + (32 if cfg.bias else 0)
    assert 0 < counts["all_heads_fraction"] < 1
