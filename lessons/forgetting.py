"""Why linear attention forgets: a d x d state's capacity for key -> value pairs.

Linear attention stores pairs by adding outer products, S = Σ_j k_j v_jᵀ, and reads
Sᵀk_q = v_q + Σ_{j≠q} (k_jᵀk_q) v_j: every other pair whose key is not orthogonal to
k_q leaks into the answer, and in d dimensions at most d keys are orthogonal. The delta
rule (Schlag et al. 2021) writes S_t = S_{t-1} + β k_t (v_t − S_{t-1}ᵀk_t)ᵀ: it first
erases what the state held for k_t, so a new pair replaces an old one instead of piling
on it. Zoology (Arora et al. 2023, arXiv 2312.04927) measures the same gap as
associative-recall accuracy.

Pure numpy, float64; the random keys and values are unit vectors drawn with a seed.
"""

from __future__ import annotations

import numpy as np


def additive_state(keys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """keys, values (n, d) -> S = Σ_j k_j v_jᵀ (d, d): linear attention's state (no φ)."""
    return keys.T @ values  # (d, d)


def delta_state(keys: np.ndarray, values: np.ndarray, beta: float = 1.0) -> np.ndarray:
    """keys, values (n, d) -> S after n delta-rule writes of strength ``beta`` (d, d),
    from S = 0: S_t = S_{t-1} + beta k_t (v_t − S_{t-1}ᵀk_t)ᵀ."""
    S = np.zeros((keys.shape[1], values.shape[1]))  # (d, d)
    for k, v in zip(keys, values, strict=True):
        S = S + beta * np.outer(k, v - S.T @ k)
    return S


def recall_error(S: np.ndarray, keys: np.ndarray, values: np.ndarray) -> float:
    """Mean over the n pairs of |Sᵀk_j − v_j| / |v_j|: 0 = every value recalled exactly."""
    read = keys @ S  # (n, d): row j is Sᵀk_j
    return float((np.linalg.norm(read - values, axis=1) / np.linalg.norm(values, axis=1)).mean())


def capacity_curves(d: int, pairs: list[int], trials: int = 20, seed: int = 0) -> dict:
    """Mean recall error of the additive and the delta-rule state against n, random unit
    keys and values in ``d`` dimensions.

    Returns:
        ``{"pairs": [n...], "additive": [err...], "delta": [err...], "d": d}``.

    Raises:
        ValueError: ``d`` < 1 or an n < 1.
    """
    if d < 1 or min(pairs, default=1) < 1:
        raise ValueError(f"need d >= 1 and n >= 1, got d = {d}, pairs {pairs}")
    rng = np.random.default_rng(seed)
    add, delta = [], []
    for n in pairs:
        errors = []
        for _ in range(trials):
            k, v = (unit_rows(rng.standard_normal((n, d))) for _ in range(2))  # (n, d)
            errors.append((recall_error(additive_state(k, v), k, v),
                           recall_error(delta_state(k, v), k, v)))  # fmt: skip
        a, b = np.mean(errors, axis=0)
        add.append(float(a))
        delta.append(float(b))
    return {"pairs": list(pairs), "additive": add, "delta": delta, "d": d}


def unit_rows(x: np.ndarray) -> np.ndarray:
    """(n, d) -> each row divided by its length."""
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def recall_table(last_logits: np.ndarray, values: list[int], answer: int) -> dict:
    """One model's answer to a recall example, by both of the model card's rules
    (``inference.recall``): its top token over the whole vocabulary and whether that is the
    right value (the headline rule); its probabilities among the n candidate values (a
    softmax over their logits alone), which value it ranks first, and whether that is the
    right one (the ranking rule).

    Args:
        last_logits: (V,) the logits after the query key.
        values: the n value ids of the example; answer: the index of the right one.

    Returns:
        ``{"top": vocabulary id, "top_right": bool, "probs": (n,) float64, "picked":
        index, "ranks_first": bool}``.
    """
    logits = np.asarray(last_logits, dtype=np.float64)  # (V,)
    x = logits[values]  # (n,)
    probs = np.exp(x - x.max())
    probs /= probs.sum()  # (n,)
    picked = int(np.argmax(probs))
    top = int(np.argmax(logits))
    return {"top": top, "top_right": top == values[answer], "probs": probs,
            "picked": picked, "ranks_first": picked == answer}  # fmt: skip
