"""One query's attention, step by step, in numbers: what the mask view's panels do to
one row, from the model's own q, k and v (float64).

Softmax (Vaswani et al. 2017, eq. 1), query i of one head::

    q·k_j  →  ÷ √d_head  →  causal mask (−∞ for j > i)  →  exp(s − max s)  →  ÷ sum
    →  weights · V

Linear (Katharopoulos et al. 2020, eq. 6), with the graph's own φ(q), φ(k)::

    φ(q)·φ(k_j)  →  causal mask (0 for j > i)  →  ÷ (φ(q)ᵀz_i + ε),  z_i = Σ_{j≤i} φ(k_j)
    →  weights · V

DeltaNet (Yang et al. 2024), with the graph's q, k (convolved, SiLU'd, L2-normalised)
and write strengths β::

    q·k_j  →  causal mask (0 for j > i)  →  × (I + tril(diag(β) K Kᵀ, −1))⁻¹ diag(β)

The last step mixes the whole row: key j's weight also depends on how later keys
overwrote what key j wrote (the delta rule's "erase, then write"), so the weights need
not sum to 1 and can be negative.

The last row over the keys is the head's attention row ``attn[layer, head, i]``
(tests/inference/test_walkthrough.py checks it to 1e-6); subtracting the row's largest
score before exp changes no weight, it only keeps exp from overflowing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from inference.analysis import Analysis


@dataclass(frozen=True)
class Walkthrough:
    """The steps of one query's row.

    Attributes:
        rows: (label, (T,) float64 values over the keys), in order; the last is the
            weights.
        output: (d_head,) the weighted sum of the values, weights · V.
        query: the query's position i.
    """

    rows: tuple[tuple[str, np.ndarray], ...]
    output: np.ndarray
    query: int

    @property
    def weights(self) -> np.ndarray:
        """(T,) the attention weights of the query: the last row."""
        return self.rows[-1][1]


def softmax_rows(q: np.ndarray, k: np.ndarray, i: int) -> list[tuple[str, np.ndarray]]:
    """The softmax steps of query ``i``: q (T, D), k (T, D) -> labelled (T,) rows."""
    T, d = k.shape
    dots = k @ q[i]  # (T,)
    scaled = dots / np.sqrt(d)  # (T,)
    masked = np.where(np.arange(T) <= i, scaled, -np.inf)  # (T,)
    exps = np.exp(masked - masked[: i + 1].max())  # (T,), 0 where masked
    return [
        ("q·k", dots),
        (f"÷ √d_head (√{d})", scaled),
        ("causal mask (−∞ after the query)", masked),
        ("exp(s − max s)", exps),
        ("÷ sum: weights", exps / exps.sum()),
    ]


def linear_rows(
    phi_q: np.ndarray, phi_k: np.ndarray, i: int, eps: float
) -> list[tuple[str, np.ndarray]]:
    """The linear-attention steps of query ``i``: φ(q), φ(k) (T, D) -> labelled (T,) rows."""
    T = phi_k.shape[0]
    sims = phi_k @ phi_q[i]  # (T,)
    masked = np.where(np.arange(T) <= i, sims, 0.0)  # (T,)
    normalizer = masked.sum() + eps  # φ(q_i)ᵀ z_i + ε
    return [
        ("φ(q)·φ(k)", sims),
        ("causal mask (0 after the query)", masked),
        (f"÷ (φ(q)ᵀz + ε) = {normalizer:.4g}: weights", masked / normalizer),
    ]


def delta_rows(
    q: np.ndarray, k: np.ndarray, beta: np.ndarray, i: int
) -> list[tuple[str, np.ndarray]]:
    """The delta-rule steps of query ``i``: q, k (T, D), beta (T,) -> labelled (T,) rows.

    The weights are row i of A = (QKᵀ ⊙ M) U⁻¹ diag(β), U = I + tril(diag(β) K Kᵀ, −1)
    (unit lower triangular), found by one triangular solve: Uᵀ x = (masked row)ᵀ.
    """
    T = k.shape[0]
    dots = k @ q[i]  # (T,)
    masked = np.where(np.arange(T) <= i, dots, 0.0)  # (T,)
    U = np.eye(T) + np.tril(beta[:, None] * (k @ k.T), -1)  # (T, T)
    weights = np.linalg.solve(U.T, masked) * beta  # (T,)
    return [
        ("q·k", dots),
        ("causal mask (0 after the query)", masked),
        ("× (I + tril(diag(β)KKᵀ, −1))⁻¹ diag(β): weights", weights),
    ]


def walkthrough(result: Analysis, layer: int, head: int, i: int, attention: str, eps: float):
    """One query's row of one head, step by step, from ``result``'s q, k, v (and φ(q),
    φ(k) for linear attention), in float64.

    Args:
        result: the model's analysis of the sentence (its ``outputs`` hold ``q``, ``k``,
            ``v`` (L, H, T, d_head), and ``phi_q``, ``phi_k`` for linear attention).
        layer, head: the head; i: the query's position, 0 <= i < T.
        attention: ``"softmax"``, ``"linear"`` or ``"delta"`` (which also needs ``beta``
            (L, H, T)); eps: the linear normalizer's ε.

    Returns:
        :class:`Walkthrough`.

    Raises:
        ValueError: for a position outside [0, T) or an unknown attention kind.
        KeyError: an analysis without the arrays the kind needs.
    """
    out = result.outputs
    T = out["q"].shape[2]
    if not 0 <= i < T:
        raise ValueError(f"query position {i} outside [0, {T})")

    def one(name: str) -> np.ndarray:
        return np.asarray(out[name][layer, head], dtype=np.float64)  # (T, d_head)

    if attention == "softmax":
        rows = softmax_rows(one("q"), one("k"), i)
    elif attention == "linear":
        rows = linear_rows(one("phi_q"), one("phi_k"), i, eps)
    elif attention == "delta":
        beta = np.asarray(out["beta"][layer, head], dtype=np.float64)  # (T,)
        rows = delta_rows(one("q"), one("k"), beta, i)
    else:
        raise ValueError(f"unknown attention kind {attention!r}")
    weights = rows[-1][1]  # (T,)
    return Walkthrough(tuple(rows), weights @ one("v"), i)  # output: (d_head,)
