"""Soft vs hard attention: a causal softmax with an inverse temperature, and row entropy.

Sources: the "soft vs hard" contrast of Xu et al. 2015, "Show, Attend and Tell" (hard
attention samples one location and is trained with a REINFORCE-style estimator);
temperature as in Hinton et al. 2015; Goodfellow, Bengio & Courville 2016, "Deep
Learning", sec. 3.13 (entropy).
"""

from __future__ import annotations

import numpy as np


def causal_allowed(T: int) -> np.ndarray:
    """Boolean (T, T), True where query i may look at key j (j <= i)."""
    return np.tril(np.ones((T, T), dtype=bool))


def softmax_beta(scores: np.ndarray, beta: float) -> np.ndarray:
    """Causal softmax with inverse temperature: softmax_j(beta * s_ij), j <= i.

    beta = 0 spreads each row uniformly over its i + 1 allowed keys; beta = 1 is
    the model's own attention when ``scores`` = QK^T / sqrt(D); beta -> inf is
    the argmax limit (Xu et al.'s hard attention samples a location instead),
    handled exactly for ``beta = np.inf`` (first
    maximum on ties). The row maximum is subtracted before ``exp``, so scores of
    any size give finite weights (the weights do not change).

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
    """Entropy in bits of each row, H_i = -sum_j a_ij log2 a_ij (0 log 0 = 0), the unit
    of the visualizer's head statistics (``inference.head_stats.entropy``).

    Args:
        weights: (T, T) attention weights. Returns: (T,). Uniform over i + 1 keys
        gives log2(i + 1); one-hot gives 0.
    """
    w = np.asarray(weights, dtype=np.float64)
    logs = np.log2(np.where(w > 0, w, 1.0))  # (T, T), log 1 = 0 where w = 0
    return -(w * logs).sum(axis=-1)
