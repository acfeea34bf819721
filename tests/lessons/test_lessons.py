"""lessons/: soft/hard attention, scoring functions, kernels, merged forms."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import lessons as ml
from models.config import SHIPPED_KINDS, ModelConfig

RNG = np.random.default_rng(0)

# The kinds whose attention is a kernel of q and k and whose scores one matrix gives: the
# delta model's q and k pass a convolution, SiLU and L2 norm (the pages say so instead).
KERNEL_KINDS = ("softmax", "linear")


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
    assert np.allclose(ml.row_entropy(w), np.log2(np.arange(1, 7)))


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
    assert np.allclose(sims["log_exp"], q @ k.T / 2.0)
    phi = lambda x: np.where(x > 0, x + 1, np.exp(x))  # noqa: E731  elu(x) + 1 written out
    assert np.allclose(sims["phi"], phi(q) @ phi(k).T)
    assert (sims["phi"] > 0).all()
    # normalizing the exp kernel under the causal mask is softmax attention
    attn = ml.causal_normalize(np.exp(sims["log_exp"]))
    assert np.allclose(attn, ml.softmax_beta(ml.dot_product_scores(q, k), 1.0))
    weights = ml.kernel_weights(q, k, eps=0.0)
    assert np.allclose(weights["exp"], attn)
    assert np.allclose(weights["phi"], ml.causal_normalize(sims["phi"]))
    assert np.allclose(weights["phi"].sum(1), 1.0)


def test_exp_kernel_weights_do_not_overflow():
    q = RNG.normal(size=(5, 4)) * 60.0  # scores in the thousands: exp overflows float64
    k = RNG.normal(size=(5, 4)) * 60.0
    with np.errstate(over="ignore"):
        assert not np.isfinite(np.exp(ml.dot_product_scores(q, k))).all()
    w = ml.kernel_weights(q, k, eps=1e-6)
    for name in ("exp", "phi"):
        assert np.isfinite(w[name]).all()
        assert np.all(w[name][np.triu_indices(5, 1)] == 0)
    assert np.allclose(w["exp"].sum(1), 1.0)


def test_eps_makes_rows_sum_below_one_when_the_kernel_is_tiny():
    sim = np.tril(np.full((4, 4), 1e-9))  # phi(q).phi(k) ~ 1e-9, as in trained layers
    eps = 1e-6
    w = ml.causal_normalize(sim, eps)
    s = sim.sum(1)  # phi(q_i)^T z_i
    assert np.allclose(w.sum(1), s / (s + eps))
    assert w.sum(1).max() < 0.01
    assert np.allclose(ml.causal_normalize(sim).sum(1), 1.0)  # eps = 0: rows sum to 1


SENTENCE = "when Mary and John went to the store , John gave a drink to Mary ."


def _shipped(exported_dir: Path, kind: str):
    from inference.analysis import analyze
    from inference.runtime import load_shipped

    model = load_shipped(exported_dir, kind)
    return model, analyze(model, SENTENCE).outputs


@pytest.mark.parametrize("kind", KERNEL_KINDS)
def test_kernels_reproduce_every_head_of_the_shipped_model(exported_dir: Path, kind):
    """The page's kernel check on every layer and head: the model's own kernel, with the
    model's eps for linear attention, matches its exported attention to float32
    rounding, and neither kernel gives NaN or inf (the linear model's layer-2 scores
    q.k/sqrt(d) reach the hundreds)."""
    model, out = _shipped(exported_dir, kind)
    cfg = model.config
    for layer in range(cfg.n_layer):
        for head in range(cfg.n_head):
            q, k = out["q"][layer, head], out["k"][layer, head]  # (T, D)
            w = ml.kernel_weights(q, k, cfg.attn_eps)
            assert np.isfinite(w["exp"]).all() and np.isfinite(w["phi"]).all()
            own = w["exp"] if kind == "softmax" else w["phi"]
            diff = np.abs(own - out["attn"][layer, head]).max()
            assert diff <= 1e-6, (layer, head, diff)


def test_the_lesson_phi_is_the_exported_models_phi(exported_dir: Path):
    """One feature map: the lesson's phi (``elu_feature_map.numpy``, the object the model's
    ``LinearAttention`` calls through its torch method) applied to the shipped linear
    graph's queries and keys gives the graph's own ``phi_q`` and ``phi_k``."""
    from models.feature_maps import elu_feature_map

    _, out = _shipped(exported_dir, "linear")
    for name in ("q", "k"):
        phi = elu_feature_map.numpy(out[name])  # (L, H, T, D)
        np.testing.assert_allclose(phi, out[f"phi_{name}"], rtol=1e-6, atol=1e-7)


def test_shipped_linear_rows_sum_to_one_but_eps_share(exported_dir: Path):
    """The kernel page's row sums on the shipped linear model: it divides by
    phi(q_i)^T z_i + eps, so row i sums to 1 - s_i with eps's share
    s_i = eps / (phi(q_i)^T z_i + eps). The model was trained to keep s_i small
    (``training.eps_share.EpsShare``): every row of every layer sums to >= 0.99 (the first
    shipped linear model's went down to 0.007 here), and the exactly normalized kernel
    (eps = 0) is off the model's weights by at most s_i on row i."""
    model, out = _shipped(exported_dir, "linear")
    eps = model.config.attn_eps
    sums = out["attn"].sum(-1)  # (L, H, T)
    share = eps / ((out["phi_q"] * out["normalizer"]).sum(-1) + eps)  # (L, H, T)
    assert sums.min() >= 0.99
    np.testing.assert_allclose(sums, 1 - share, atol=1e-6)
    for layer in range(model.config.n_layer):
        for head in range(model.config.n_head):
            q, k = out["q"][layer, head], out["k"][layer, head]  # (T, D)
            exact = ml.kernel_weights(q, k, 0.0)["phi"]  # (T, T), rows sum to 1
            off = np.abs(exact - out["attn"][layer, head]).max(-1)  # (T,)
            assert (off <= share[layer, head] + 1e-6).all(), (layer, head)


def test_model_score_variance_counts_the_causal_pairs():
    q, k = RNG.normal(size=(6, 4)) * 3, RNG.normal(size=(6, 4))
    own = ml.model_score_variance(q, k)
    pairs = np.array([q[i] @ k[j] for i in range(6) for j in range(i + 1)])
    assert own["n_pairs"] == 21 and own["d"] == 4
    assert np.isclose(own["unscaled"], pairs.var())
    assert np.isclose(own["scaled"], (pairs / 2.0).var())
    assert np.isclose(own["var_q"], q.var()) and np.isclose(own["var_k"], k.var())


@pytest.mark.parametrize("kind", SHIPPED_KINDS)
def test_model_score_variance_on_the_shipped_model(exported_dir: Path, kind):
    model, out = _shipped(exported_dir, kind)
    q, k = out["q"][1, 2], out["k"][1, 2]  # (T, D)
    own = ml.model_score_variance(q, k)
    T, D = q.shape
    scores = q.astype(np.float64) @ k.T.astype(np.float64)  # (T, T)
    causal = scores[np.tril_indices(T)]
    assert own["d"] == model.config.d_head == D
    assert np.isclose(own["unscaled"], causal.var())
    assert np.isclose(own["scaled"], (causal / np.sqrt(D)).var())
    assert own["scaled"] > 0


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
    from inference.analysis import analyze

    cfg = model.config
    out = analyze(model, text).outputs
    for layer in range(cfg.n_layer):
        for head in range(cfg.n_head):
            W_QK = ml.merged_qk(model.weights, layer, head, cfg.n_head)
            merged = ml.merged_scores(out["attn_in"][layer], W_QK, cfg.d_head)
            ref = ml.reference_scores(out, layer, head, cfg.attention)
            assert np.abs(merged - ref).max() <= 1e-4
            assert ml.numerical_rank(ml.singular_values(W_QK), W_QK.shape) <= cfg.d_head


@pytest.mark.parametrize("kind", KERNEL_KINDS)
def test_merged_scores_match_an_exported_model(tiny_exports, kind):
    from inference.runtime import load_shipped

    torch_model, folder = tiny_exports[kind]
    _check_model_scores(_with_weights(load_shipped(folder, kind), torch_model))


@pytest.mark.parametrize("kind", KERNEL_KINDS)
def test_merged_scores_match_the_shipped_model(exported_dir: Path, kind):
    from inference.runtime import load_shipped

    model = load_shipped(exported_dir, kind)
    if model.weights is None:
        pytest.skip(f"exported/ has no {kind}.safetensors checkpoint")
    _check_model_scores(model, "when Mary and John went to the store , John gave a drink to Mary .")


@pytest.mark.parametrize(
    "overrides",
    [{}, {"bias": False, "ln_bias": False}, {"position_scheme": "learned", "tie_weights": False}],
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


@pytest.mark.parametrize(
    "overrides",
    [{}, {"bias": False, "ln_bias": False}, {"position_scheme": "learned", "tie_weights": False}],
)
def test_weight_counts_match_the_config_formula(overrides):
    from models.transformer import Transformer

    cfg = ModelConfig(vocab_size=50, n_layer=2, n_head=4, d_model=32, d_mlp=48, **overrides)
    model = Transformer(cfg)
    weights = {k: v.detach().numpy() for k, v in model.state_dict().items()}  # tied: both
    measured = ml.weight_parameter_counts(weights, 1, 3, cfg.n_head)
    formula = ml.head_parameter_counts(cfg)
    assert measured["source"] == "weights" and formula["source"] == "config"
    assert measured["model"] == model.num_parameters()
    for key in ("q", "k", "v", "o", "per_head", "merged_free", "all_heads", "model"):
        assert measured[key] == formula[key], key
    assert measured["merged_entries"] == ml.merged_qk(weights, 1, 3, 4).size == 33**2


@pytest.mark.parametrize("kind", SHIPPED_KINDS)
def test_weight_counts_on_the_shipped_checkpoint(exported_dir: Path, kind):
    from inference.runtime import load_shipped

    model = load_shipped(exported_dir, kind)
    if model.weights is None:
        pytest.skip(f"exported/ has no {kind}.safetensors checkpoint")
    cfg = model.config
    formula = ml.head_parameter_counts(cfg)
    for layer in range(cfg.n_layer):
        for head in range(cfg.n_head):
            measured = ml.weight_parameter_counts(model.weights, layer, head, cfg.n_head)
            assert {k: v for k, v in measured.items() if k != "source"} == {
                k: v for k, v in formula.items() if k != "source"
            }
    assert measured["model"] == sum(w.size for w in model.weights.values())
    C = cfg.d_model
    assert measured["merged_entries"] == (C + 1) ** 2
    assert measured["merged_free"] == 2 * (C * cfg.d_head + cfg.d_head * cfg.bias)
