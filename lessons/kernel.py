"""The kernel view: exp(q.k / sqrt(D)) vs phi(q).phi(k), and reordering the products.

Source: Katharopoulos et al. 2020, "Transformers are RNNs" (kernel view, eq. 2-7,
phi = elu + 1, y_i = phi(q_i)^T S_i / (phi(q_i)^T z_i + eps)). phi is the model's own
feature-map object (``models/feature_maps.py``), through its numpy method.
"""

from __future__ import annotations

import numpy as np

from lessons.scoring import dot_product_scores
from lessons.soft_hard import causal_allowed, softmax_beta
from models.feature_maps import FeatureMap, elu_feature_map


def kernel_similarities(
    q: np.ndarray, k: np.ndarray, scaled: bool = True, feature_map: FeatureMap = elu_feature_map
) -> dict:
    """Two similarity kernels on the same queries and keys (Katharopoulos et al. 2020, eq. 2-4).

    ``log_exp``: log sim(q, k) = q^T k / sqrt(D), the softmax kernel exp(q^T k / sqrt(D))
    in log space (``scaled=False`` drops the sqrt(D)); exp of it overflows float64
    for scores above ~709, which trained models reach. ``phi``: phi(q)^T phi(k)
    with phi = ``feature_map`` (linear attention's, elu + 1). Both kernels are positive.

    Args:
        q, k: (T, D). Returns: ``{"log_exp": (T, T), "phi": (T, T)}``.
    """
    return {
        "log_exp": dot_product_scores(q, k, scaled=scaled),  # (T, T)
        "phi": feature_map.numpy(q) @ feature_map.numpy(k).T,  # (T, T)
    }


def causal_normalize(sim: np.ndarray, eps: float = 0.0) -> np.ndarray:
    """Mask keys j > i and divide each row by its sum plus ``eps``: kernel -> weights.

    With the linear model's ``eps`` this is exactly its attention matrix
    phi(q_i)^T phi(k_j) / (phi(q_i)^T z_i + eps), z_i = sum_{j<=i} phi(k_j): row i
    sums to phi(q_i)^T z_i / (phi(q_i)^T z_i + eps), which is below 1 when
    phi(q_i)^T z_i is comparable to eps. ``eps = 0`` gives rows that sum to 1.

    Args:
        sim: (T, T) non-negative kernel values; eps: >= 0.

    Returns:
        (T, T) float64 weights, zero above the diagonal.
    """
    s = np.where(causal_allowed(sim.shape[0]), np.asarray(sim, np.float64), 0.0)  # (T, T)
    return s / (s.sum(axis=1, keepdims=True) + eps)


def kernel_weights(
    q: np.ndarray, k: np.ndarray, eps: float, feature_map: FeatureMap = elu_feature_map
) -> dict[str, np.ndarray]:
    """Both kernels turned into causal attention weights, computed stably.

    ``exp``: the exp kernel normalized, i.e. the causal softmax of q.k / sqrt(D),
    computed after subtracting each row's largest allowed score (the normalized
    weights are invariant to that shift, and nothing overflows). ``phi``: the phi
    kernel divided by (row sum + ``eps``), as linear attention does.

    Args:
        q, k: (T, D); eps: the linear-attention normalizer epsilon (``cfg.attn_eps``);
        feature_map: phi (default linear attention's elu + 1).

    Returns:
        ``{"exp": (T, T), "phi": (T, T)}``, finite, zero above the diagonal.
    """
    sims = kernel_similarities(q, k, feature_map=feature_map)
    return {
        "exp": softmax_beta(sims["log_exp"], 1.0),  # (T, T)
        "phi": causal_normalize(sims["phi"], eps),  # (T, T)
    }


def reorder_flops(T: int, d: int, d_v: int | None = None) -> dict[str, int]:
    """FLOPs (2 per multiply-add) of both orders of phi(Q) phi(K)^T V.

    ``quadratic`` (phi(Q) phi(K)^T) V: 2 T^2 (d + d_v), grows as T^2 d;
    ``linear`` phi(Q) (phi(K)^T V): 4 T d d_v, grows as T d^2.
    """
    d_v = d if d_v is None else d_v
    return {"quadratic": 2 * T * T * (d + d_v), "linear": 4 * T * d * d_v}


def linear_reorder_check(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, feature_map: FeatureMap = elu_feature_map
) -> dict:
    """Associativity: (phi(Q) phi(K)^T) V == phi(Q) (phi(K)^T V) (Katharopoulos et al., eq. 5).

    Non-causal and unnormalized on purpose: the causal model replaces phi(K)^T V
    by the prefix sums S_i = sum_{j<=i} phi(k_j) v_j^T (its recurrent state) and
    divides by phi(q_i)^T z_i + eps; the reordering itself is the same.

    Args:
        q, k: (T, d); v: (T, d_v); feature_map: phi (default linear attention's elu + 1).

    Returns:
        ``quadratic`` (T, d_v), ``linear`` (T, d_v), ``max_abs_diff`` (float),
        ``flops_quadratic``, ``flops_linear`` (int), ``kv_state`` (d, d_v).
    """
    fq, fk = feature_map.numpy(q), feature_map.numpy(k)  # (T, d), (T, d)
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
