"""One token of the delta rule, "erase, then write", in numbers from the graph's arrays.

DeltaNet (Schlag et al. 2021, arXiv 2102.11174; Yang et al. 2024, arXiv 2406.06484)
keeps a state S of d_head x d_head per head and, at token t::

    read   = S_{t-1}ᵀ k_t                 what the state recalls for this key
    error  = v_t − read                    what it should recall instead
    update = β_t k_t errorᵀ                a rank-1 correction of strength β_t
    S_t    = S_{t-1} + update              (= (I − β_t k_t k_tᵀ) S_{t-1} + β_t k_t v_tᵀ)
    y_t    = S_tᵀ q_t

Linear attention's state only adds, S_i = S_{i-1} + φ(k_i) v_iᵀ, so an old association
under a similar key is never taken out; the delta rule replaces it (the β_t part of it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from inference.analysis import Analysis


@dataclass(frozen=True)
class DeltaStep:
    """The delta rule's token ``t`` of one head, float64.

    Attributes:
        before, update, after: (d_head, d_head) S_{t-1}, β_t k_t errorᵀ, S_t.
        key, value, query, read, error, output: (d_head,) k_t, v_t, q_t, S_{t-1}ᵀ k_t,
            v_t − read, y_t = S_tᵀ q_t.
        beta: β_t in (0, 1); recall_before, recall_after: |error| / |v_t| before and
            |v_t − S_tᵀ k_t| / |v_t| after the write (how well the state recalls v_t).
    """

    before: np.ndarray
    update: np.ndarray
    after: np.ndarray
    key: np.ndarray
    value: np.ndarray
    query: np.ndarray
    read: np.ndarray
    error: np.ndarray
    output: np.ndarray
    beta: float
    recall_before: float
    recall_after: float


def delta_step(result: Analysis, layer: int, head: int, t: int) -> DeltaStep:
    """Token ``t`` of one head of a delta model, from ``result.outputs``' q, k, v
    (L, H, T, d_head), beta (L, H, T) and state (L, H, T, d_head, d_head) (S_t after
    token t; S_{-1} = 0).

    Raises:
        ValueError: ``t`` outside [0, T).
        KeyError: an analysis without those arrays (not a delta model's).
    """
    out = result.outputs
    T = out["state"].shape[2]
    if not 0 <= t < T:
        raise ValueError(f"token position {t} outside [0, {T})")
    states = np.asarray(out["state"][layer, head], dtype=np.float64)  # (T, D, D)
    one = {n: np.asarray(out[n][layer, head, t], dtype=np.float64) for n in ("q", "k", "v")}
    beta = float(out["beta"][layer, head, t])
    before = states[t - 1] if t else np.zeros_like(states[0])  # (D, D)
    read = before.T @ one["k"]  # (D,)
    error = one["v"] - read  # (D,)
    update = beta * np.outer(one["k"], error)  # (D, D)
    after = before + update  # (D, D)
    norm = max(float(np.linalg.norm(one["v"])), 1e-12)
    return DeltaStep(
        before=before,
        update=update,
        after=after,
        key=one["k"],
        value=one["v"],
        query=one["q"],
        read=read,
        error=error,
        output=after.T @ one["q"],
        beta=beta,
        recall_before=float(np.linalg.norm(error)) / norm,
        recall_after=float(np.linalg.norm(one["v"] - after.T @ one["k"])) / norm,
    )
