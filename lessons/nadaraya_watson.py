"""Attention as kernel regression: the Nadaraya-Watson estimator on a 1-D toy.

Nadaraya (1964) and Watson (1964); d2l.ai section 11.2. Given training pairs (x_i, y_i),
the prediction at a query x is a weighted average of the y_i,

    f(x) = sum_i alpha(x, x_i) y_i,   alpha(x, x_i) = K(x - x_i) / sum_j K(x - x_j),

with the Gaussian kernel K(u) = exp(-u^2 / (2 w^2)) of width w. Then alpha is a softmax
of -(x - x_i)^2 / (2 w^2) over the keys x_i: the query x, keys x_i and values y_i of
attention, with no parameters learned. Numpy only.
"""

from __future__ import annotations

import numpy as np


def toy_data(n: int = 50, noise: float = 0.5, seed: int = 0):
    """d2l's toy: keys x_i sorted uniform on [0, 5), values y_i = f(x_i) + noise with
    f(x) = 2 sin(x) + x^0.8. Returns ``(x (n,), y (n,))``."""
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(0, 5, n))  # (n,)
    return x, true_function(x) + rng.normal(0, noise, n)  # (n,)


def true_function(x: np.ndarray) -> np.ndarray:
    """f(x) = 2 sin(x) + x^0.8, the function the noisy values come from."""
    return 2 * np.sin(x) + x**0.8


def attention_weights(queries: np.ndarray, keys: np.ndarray, width: float) -> np.ndarray:
    """alpha(x, x_i) for every query and key: (Q,) and (N,) -> (Q, N), rows sum to 1.

    A softmax of -(x - x_i)^2 / (2 w^2) over the keys (the largest logit subtracted, so
    a narrow kernel never divides 0 by 0: it tends to the nearest key).

    Raises:
        ValueError: for a width that is not positive.
    """
    if not width > 0:
        raise ValueError(f"the kernel width must be positive, got {width}")
    logits = -((queries[:, None] - keys[None, :]) ** 2) / (2 * width**2)  # (Q, N)
    logits -= logits.max(axis=1, keepdims=True)
    weights = np.exp(logits)  # (Q, N)
    return weights / weights.sum(axis=1, keepdims=True)


def predict(queries: np.ndarray, keys: np.ndarray, values: np.ndarray, width: float):
    """f(x) = sum_i alpha(x, x_i) y_i: (Q,) predictions and the (Q, N) weights."""
    weights = attention_weights(queries, keys, width)  # (Q, N)
    return weights @ values, weights  # (Q,), (Q, N)
