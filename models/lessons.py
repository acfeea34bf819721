"""Numbers behind the lesson pages (pure numpy: no torch, no Streamlit).

Every function takes plain arrays (a head's ``q``/``k``/``v`` (T, D), scores
(T, T), the model's PyTorch-named weights) and computes in float64, so a
measured difference is the model's float32 rounding, not ours.

Sources: Bahdanau, Cho & Bengio 2015 (additive attention); Vaswani et al. 2017
(scaled dot-product, footnote 4); Katharopoulos et al. 2020 "Transformers are
RNNs" (kernel view, phi = elu + 1); Elhage et al. 2021 "A Mathematical
Framework for Transformer Circuits" (merged W_Q W_K^T and W_V W_O);
Goodfellow, Bengio & Courville 2016, "Deep Learning", sec. 3.13 (entropy).
"""

from __future__ import annotations

import numpy as np

from models.config import ModelConfig


def causal_allowed(T: int) -> np.ndarray:
    """Boolean (T, T), True where query i may look at key j (j <= i)."""
    return np.tril(np.ones((T, T), dtype=bool))


# --- soft vs hard attention ------------------------------------------------


def softmax_beta(scores: np.ndarray, beta: float) -> np.ndarray:
    """Causal softmax with inverse temperature: softmax_j(beta * s_ij), j <= i.

    beta = 0 spreads each row uniformly over its i + 1 allowed keys; beta = 1 is
    the model's own attention when ``scores`` = QK^T / sqrt(D); beta -> inf is
    hard (argmax) attention, handled exactly for ``beta = np.inf`` (first
    maximum on ties). Source: the "soft vs hard" contrast of Xu et al. 2015,
    "Show, Attend and Tell"; temperature as in Hinton et al. 2015.

    Args:
        scores: (T, T) pre-mask scores, row = query, column = key.
        beta: inverse temperature >= 0 (``np.inf`` allowed).

    Returns:
        (T, T) float64 weights: rows sum to 1, zero above the diagonal.

    Raises:
        ValueError: for a non-square ``scores``, or beta < 0 or NaN.
    """
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 2 or s.shape[0] != s.shape[1]:
        raise ValueError(f"scores must have shape (T, T), got {s.shape}")
    if np.isnan(beta) or beta < 0:
        raise ValueError(f"beta must be >= 0, got {beta}")
    allowed = causal_allowed(s.shape[0])  # (T, T)
    masked = np.where(allowed, s, -np.inf)  # (T, T)
    if np.isinf(beta):
        out = np.zeros_like(s)
        out[np.arange(s.shape[0]), masked.argmax(axis=1)] = 1.0
        return out
    if beta == 0:
        return allowed / allowed.sum(axis=1, keepdims=True)  # (T, T)
    z = beta * (masked - masked.max(axis=1, keepdims=True))  # (T, T), <= 0 where allowed
    e = np.where(allowed, np.exp(z), 0.0)  # (T, T)
    return e / e.sum(axis=1, keepdims=True)


def row_entropy(weights: np.ndarray) -> np.ndarray:
    """Entropy in nats of each row, H_i = -sum_j a_ij log a_ij (0 log 0 = 0).

    Args:
        weights: (T, T) attention weights. Returns: (T,). Uniform over i + 1 keys
        gives log(i + 1); one-hot gives 0.
    """
    w = np.asarray(weights, dtype=np.float64)
    logs = np.log(np.where(w > 0, w, 1.0))  # (T, T), log 1 = 0 where w = 0
    return -(w * logs).sum(axis=-1)


# --- scoring functions -----------------------------------------------------


def dot_product_scores(q: np.ndarray, k: np.ndarray, scaled: bool = True) -> np.ndarray:
    """q_i . k_j, divided by sqrt(D) when ``scaled`` (Vaswani et al. 2017, eq. 1).

    Args:
        q, k: (T, D). Returns: (T, T).
    """
    q, k = np.asarray(q, np.float64), np.asarray(k, np.float64)
    s = q @ k.T  # (T, T)
    return s / np.sqrt(q.shape[-1]) if scaled else s


def additive_scores(q, k, W_q, W_k, w) -> np.ndarray:
    """Bahdanau et al. 2015 (eq. 6, "concat" attention): s_ij = w^T tanh(W_q q_i + W_k k_j).

    Args:
        q, k: (T, D) queries and keys; W_q, W_k: (h, D); w: (h,).

    Returns:
        (T, T) scores. Costs T^2 h tanh evaluations and a (T, T, h) intermediate,
        against T^2 D multiply-adds and no intermediate for the dot product.
    """
    a = np.asarray(q, np.float64) @ np.asarray(W_q, np.float64).T  # (T, h)
    b = np.asarray(k, np.float64) @ np.asarray(W_k, np.float64).T  # (T, h)
    hidden = np.tanh(a[:, None, :] + b[None, :, :])  # (T, T, h)
    return hidden @ np.asarray(w, np.float64)  # (T, T)


def random_additive_params(d: int, hidden: int, seed: int = 0):
    """Untrained (W_q (h, D), W_k (h, D), w (h,)), Xavier-scaled, for the demo."""
    rng = np.random.default_rng(seed)
    W_q = rng.normal(0, 1 / np.sqrt(d), (hidden, d))  # (h, D)
    W_k = rng.normal(0, 1 / np.sqrt(d), (hidden, d))  # (h, D)
    w = rng.normal(0, 1 / np.sqrt(hidden), hidden)  # (h,)
    return W_q, W_k, w


def score_variance_by_dim(dims, n_samples: int = 4000, seed: int = 0) -> dict[str, np.ndarray]:
    """Var(q . k) and Var(q . k / sqrt(d)) for q, k with i.i.d. N(0, 1) entries.

    Vaswani et al. 2017, footnote 4: q . k = sum_i q_i k_i has mean 0 and
    variance d, so unscaled scores grow with d and push softmax into its flat,
    near-one-hot region; dividing by sqrt(d) brings the variance back to 1.

    Returns:
        ``dims`` (n,), ``unscaled`` (n,) ~ d, ``scaled`` (n,) ~ 1.
    """
    rng = np.random.default_rng(seed)
    dims = np.asarray(list(dims), dtype=int)
    unscaled, scaled = [], []
    for d in dims:
        q = rng.standard_normal((n_samples, d))  # (n, d)
        k = rng.standard_normal((n_samples, d))  # (n, d)
        dots = np.einsum("nd,nd->n", q, k)  # (n,)
        unscaled.append(dots.var())
        scaled.append((dots / np.sqrt(d)).var())
    return {"dims": dims, "unscaled": np.array(unscaled), "scaled": np.array(scaled)}


# --- kernel view -----------------------------------------------------------


def elu_plus_one(x: np.ndarray) -> np.ndarray:
    """phi(x) = elu(x) + 1: x + 1 for x > 0, exp(x) otherwise (Katharopoulos et al. eq. 7)."""
    x = np.asarray(x, np.float64)
    return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))


def kernel_similarities(q: np.ndarray, k: np.ndarray, scaled: bool = True) -> dict:
    """Two similarity kernels on the same queries and keys (Katharopoulos et al. 2020, eq. 2-4).

    ``exp``: sim(q, k) = exp(q^T k / sqrt(D)) (softmax attention; ``scaled=False``
    drops the sqrt(D)); ``phi``: phi(q)^T phi(k) with phi = elu + 1 (linear attention).
    Both are positive; attention row-normalizes either one.

    Args:
        q, k: (T, D). Returns: ``{"exp": (T, T), "phi": (T, T)}``.
    """
    s = dot_product_scores(q, k, scaled=scaled)  # (T, T)
    return {"exp": np.exp(s), "phi": elu_plus_one(q) @ elu_plus_one(k).T}


def causal_normalize(sim: np.ndarray) -> np.ndarray:
    """Mask keys j > i and divide each row by its sum: a kernel (T, T) -> attention (T, T)."""
    s = np.where(causal_allowed(sim.shape[0]), np.asarray(sim, np.float64), 0.0)  # (T, T)
    return s / s.sum(axis=1, keepdims=True)


def reorder_flops(T: int, d: int, d_v: int | None = None) -> dict[str, int]:
    """FLOPs (2 per multiply-add) of both orders of phi(Q) phi(K)^T V.

    ``quadratic`` (phi(Q) phi(K)^T) V: 2 T^2 (d + d_v), grows as T^2 d;
    ``linear`` phi(Q) (phi(K)^T V): 4 T d d_v, grows as T d^2.
    """
    d_v = d if d_v is None else d_v
    return {"quadratic": 2 * T * T * (d + d_v), "linear": 4 * T * d * d_v}


def linear_reorder_check(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> dict:
    """Associativity: (phi(Q) phi(K)^T) V == phi(Q) (phi(K)^T V) (Katharopoulos et al., eq. 5).

    Non-causal and unnormalized on purpose: the causal model replaces phi(K)^T V
    by the prefix sums S_i = sum_{j<=i} phi(k_j) v_j^T (its recurrent state) and
    divides by phi(q_i)^T z_i; the reordering itself is the same.

    Args:
        q, k: (T, d); v: (T, d_v).

    Returns:
        ``quadratic`` (T, d_v), ``linear`` (T, d_v), ``max_abs_diff`` (float),
        ``flops_quadratic``, ``flops_linear`` (int), ``kv_state`` (d, d_v).
    """
    fq, fk = elu_plus_one(q), elu_plus_one(k)  # (T, d), (T, d)
    v = np.asarray(v, np.float64)
    quadratic = (fq @ fk.T) @ v  # (T, T) @ (T, d_v) -> (T, d_v)
    kv = fk.T @ v  # (d, d_v)
    linear = fq @ kv  # (T, d_v)
    flops = reorder_flops(q.shape[0], q.shape[1], v.shape[1])
    return {
        "quadratic": quadratic,
        "linear": linear,
        "kv_state": kv,
        "max_abs_diff": float(np.abs(quadratic - linear).max()),
        "flops_quadratic": flops["quadratic"],
        "flops_linear": flops["linear"],
    }


# --- merged bilinear form (Elhage et al. 2021) -------------------------------


def _head_rows(weights: dict, layer: int, head: int, n_head: int, part: str):
    """Rows of head ``head`` in ``blocks.<layer>.attn.<part>_proj``: W (D, C), b (D,)."""
    W = np.asarray(weights[f"blocks.{layer}.attn.{part}_proj.weight"], np.float64)  # (C, C)
    D = W.shape[0] // n_head
    rows = slice(head * D, (head + 1) * D)
    bias = weights.get(f"blocks.{layer}.attn.{part}_proj.bias")
    b = np.zeros(D) if bias is None else np.asarray(bias, np.float64)[rows]  # (D,)
    return W[rows], b  # (D, C), (D,)


def homogeneous(x: np.ndarray) -> np.ndarray:
    """Append a constant 1: (T, C) -> x~ (T, C + 1), so x W^T + b = x~ [W^T; b]."""
    x = np.asarray(x, np.float64)
    return np.concatenate([x, np.ones(x.shape[:-1] + (1,))], axis=-1)


def merged_qk(weights: dict, layer: int, head: int, n_head: int) -> np.ndarray:
    """W_QK = A_Q A_K^T (C + 1, C + 1) in homogeneous coordinates.

    PyTorch's Linear computes q = x W_Q^T + b_Q with W_Q^h the head's D rows
    (D, C). Stacking A_Q = [W_Q^h^T; b_Q^h] (C + 1, D) gives q = x~ A_Q with
    x~ = [x, 1], so q_i . k_j = x~_i W_QK x~_j^T exactly, biases included (the
    last row/column hold the bias terms; without biases they are zero). Rank
    <= D. Elhage et al. 2021, "A Mathematical Framework for Transformer Circuits".
    """
    Wq, bq = _head_rows(weights, layer, head, n_head, "q")  # (D, C), (D,)
    Wk, bk = _head_rows(weights, layer, head, n_head, "k")  # (D, C), (D,)
    A_q = np.vstack([Wq.T, bq[None, :]])  # (C + 1, D)
    A_k = np.vstack([Wk.T, bk[None, :]])  # (C + 1, D)
    return A_q @ A_k.T  # (C + 1, C + 1)


def merged_ov(weights: dict, layer: int, head: int, n_head: int) -> np.ndarray:
    """W_OV = W_V^h^T W_O^h^T (C, C), row-vector convention: head output = a . (x W_OV).

    W_O^h is the head's D columns of ``o_proj.weight`` (C, D). The value bias
    adds the constant b_V^h W_O^h^T (rows of attention sum to 1), left out here.
    """
    Wv, _ = _head_rows(weights, layer, head, n_head, "v")  # (D, C)
    Wo = np.asarray(weights[f"blocks.{layer}.attn.o_proj.weight"], np.float64)  # (C, C)
    D = Wv.shape[0]
    return Wv.T @ Wo[:, head * D : (head + 1) * D].T  # (C, D) @ (D, C) -> (C, C)


def merged_scores(attn_in: np.ndarray, W_QK: np.ndarray, d_head: int) -> np.ndarray:
    """Scores from the merged matrix: x~ W_QK x~^T / sqrt(D).

    Args:
        attn_in: (T, C) the LayerNorm'd input of this layer (contract ``attn_in[layer]``).
        W_QK: (C + 1, C + 1) from :func:`merged_qk`; d_head: D.

    Returns:
        (T, T), equal to the softmax model's ``scores[layer, head]`` = QK^T / sqrt(D).
        For linear models ``scores`` is phi(Q) phi(K)^T, so compare with
        :func:`reference_scores` (q k^T / sqrt(D) from the model's q, k) instead.
    """
    x = homogeneous(attn_in)  # (T, C + 1)
    return x @ W_QK @ x.T / np.sqrt(d_head)  # (T, T)


def reference_scores(outputs: dict, layer: int, head: int, attention: str) -> np.ndarray:
    """The model's QK^T / sqrt(D) for one head: ``scores`` for softmax models,
    recomputed from the exported ``q``, ``k`` for linear ones. Returns (T, T)."""
    if attention == "softmax":
        return np.asarray(outputs["scores"][layer, head], np.float64)
    return dot_product_scores(outputs["q"][layer, head], outputs["k"][layer, head])


def singular_values(M: np.ndarray) -> np.ndarray:
    """Singular values of a matrix, largest first: (min(R, K),)."""
    return np.linalg.svd(np.asarray(M, np.float64), compute_uv=False)


def numerical_rank(sv: np.ndarray, shape: tuple[int, int], rtol: float | None = None) -> int:
    """Count of singular values above rtol * sv_max (numpy's matrix_rank default:
    rtol = max(shape) * float64 eps). Returns an int <= min(shape)."""
    if sv.size == 0 or sv[0] == 0:
        return 0
    rtol = max(shape) * np.finfo(np.float64).eps if rtol is None else rtol
    return int((sv > rtol * sv[0]).sum())


def model_parameter_count(cfg: ModelConfig) -> int:
    """Distinct parameters of ``models.transformer.Transformer(cfg)`` (tied counted once)."""
    C, V, L = cfg.d_model, cfg.vocab_size, cfg.n_layer
    ln = C * (2 if cfg.ln_bias else 1)
    b = 1 if cfg.bias else 0
    block = 2 * ln + 4 * (C * C + C * b) + 2 * C * cfg.d_mlp + (cfg.d_mlp + C) * b
    total = V * C + L * block + ln + (0 if cfg.tie_weights else V * C)
    return total + (cfg.context_length * C if cfg.pos_enc == "learned" else 0)


def head_parameter_counts(cfg: ModelConfig) -> dict[str, int | float]:
    """Parameters one head owns, against the model.

    Per head: Q, K, V are C x D each (+ D biases), so Q + K + V = C (2D + D)
    (+ 3D); O is D x C (its bias is shared by all heads). The merged W_QK and
    W_OV have C^2 entries each but only 2 C D free parameters behind them.
    """
    C, D, bias = cfg.d_model, cfg.d_head, int(cfg.bias)
    qkv = C * 3 * D + 3 * D * bias
    per_head = qkv + D * C
    heads = cfg.n_layer * cfg.n_head
    total = model_parameter_count(cfg)
    return {
        "q": C * D + D * bias,
        "k": C * D + D * bias,
        "v": C * D + D * bias,
        "o": D * C,
        "qkv": qkv,
        "per_head": per_head,
        "merged_entries": C * C,
        "all_heads": per_head * heads,
        "model": total,
        "head_fraction": per_head / total,
        "all_heads_fraction": per_head * heads / total,
    }
