"""Measures of a translation: BLEU as the lesson states it, exact match, and how much of
an attention row falls on the gold source word (no torch; lists of words and arrays in)."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np


def bleu(pred: list[str], label: list[str], k: int = 4) -> float:
    """BLEU of one predicted sentence against its label, d2l.ai's formula (section 10.7.6):

        exp(min(0, 1 - len_label / len_pred)) * prod_{n=1..k} p_n ^ (1 / 2^n)

    where p_n is the clipped n-gram precision (each label n-gram matched at most as often
    as it occurs). Unlike Papineni et al. 2002's geometric mean, longer n-grams weigh
    less; 1.0 for an exact match, 0.0 for an empty prediction or no matching unigram.
    Orders n above ``len(pred)`` are skipped, as in d2l.
    """
    if not pred:
        return 0.0
    score = math.exp(min(0.0, 1.0 - len(label) / len(pred)))
    for n in range(1, min(k, len(pred)) + 1):
        wanted = Counter(tuple(label[i : i + n]) for i in range(len(label) - n + 1))
        grams = [tuple(pred[i : i + n]) for i in range(len(pred) - n + 1)]
        matches = sum(min(c, wanted[g]) for g, c in Counter(grams).items())
        score *= (matches / len(grams)) ** (0.5**n)
    return score


def gold_weights(attention: np.ndarray, alignment: list[int]) -> np.ndarray:
    """Each scored output position's weight on its gold source word: ``attention`` (T, S)
    rows are output positions (the first ``len(alignment)``, i.e. without ``<eos>``,
    are scored), ``alignment[t]`` the source position output t translates ->
    (len(alignment),)."""
    rows = np.asarray(attention)[: len(alignment)]  # (T, S)
    return rows[np.arange(len(alignment)), alignment]
