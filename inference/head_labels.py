"""Automatic head labels from per-head scores (``inference/head_stats.py``).

Label thresholds (``label_heads``), first match wins:

==================  ==========================================================
label               rule
==================  ==========================================================
induction           induction score >= ``INDUCTION_MIN`` (0.4), if given
previous-token      previous-token score >= ``PREVIOUS_MIN`` (0.5)
first-token (sink)  first-token score >= ``FIRST_MIN`` (0.5)
broad               entropy >= ``BROAD_FRACTION`` (0.75) x entropy of the
                    uniform causal pattern over T tokens (if ``n_tokens`` given),
                    else entropy >= ``BROAD_BITS`` (2.0 bits)
local               mean attention distance <= ``LOCAL_MAX`` (1.5 tokens)
mixed               none of the above
==================  ==========================================================
"""

from __future__ import annotations

import numpy as np

INDUCTION_MIN = 0.4
PREVIOUS_MIN = 0.5
FIRST_MIN = 0.5
BROAD_FRACTION = 0.75
BROAD_BITS = 2.0
LOCAL_MAX = 1.5


def uniform_causal_entropy(n_tokens: int) -> float:
    """Entropy in bits of the uniform causal pattern over ``n_tokens``: ``mean_i log2(i + 1)``."""
    if n_tokens < 1:
        raise ValueError(f"n_tokens must be >= 1, got {n_tokens}")
    return float(np.mean(np.log2(np.arange(1, n_tokens + 1))))


def label_heads(scores: dict[str, np.ndarray], n_tokens: int | None = None) -> np.ndarray:
    """Automatic head labels from per-head scores (thresholds in the module docstring).

    Args:
        scores: (L, H) arrays keyed ``previous_token``, ``first_token``, ``distance``,
            ``entropy`` (all required) and ``induction`` (optional).
        n_tokens: T, to make the "broad" threshold relative to the uniform pattern.

    Returns:
        (L, H) array of str labels: "induction", "previous-token", "first-token (sink)",
        "broad", "local" or "mixed".

    Raises:
        KeyError: if a required score is missing. ValueError: if shapes differ.
    """
    required = ("previous_token", "first_token", "distance", "entropy")
    missing = [k for k in required if k not in scores]
    if missing:
        raise KeyError(f"missing scores: {missing}")
    s = {k: np.asarray(v, dtype=float) for k, v in scores.items()}
    shape = s["previous_token"].shape
    if any(v.shape != shape for v in s.values()):
        raise ValueError(f"all scores must have the same shape {shape}")
    broad_min = BROAD_FRACTION * uniform_causal_entropy(n_tokens) if n_tokens else BROAD_BITS
    rules = [
        ("induction", s["induction"] >= INDUCTION_MIN if "induction" in s else None),
        ("previous-token", s["previous_token"] >= PREVIOUS_MIN),
        ("first-token (sink)", s["first_token"] >= FIRST_MIN),
        ("broad", s["entropy"] >= broad_min),
        ("local", s["distance"] <= LOCAL_MAX),
    ]
    labels = np.full(shape, "mixed", dtype=object)
    done = np.zeros(shape, dtype=bool)
    for name, hit in rules:
        if hit is None:
            continue
        take = hit & ~done
        labels[take] = name
        done |= take
    return labels.astype(str)
