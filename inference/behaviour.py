"""Behavioural scores of a whole model, from its next-token logits alone (numpy only).

Unlike the per-head scores of ``inference/head_stats.py``, which read the attention
pattern, these look only at what the model predicts, so they apply to any model,
including one that recalls through a recurrent state and never draws an attention stripe
(DeltaNet, ``models/delta.py``).

* :func:`copy_losses`, the behavioural induction score (Olsson et al. 2022, "In-context
  Learning and Induction Heads", section 2): a sequence of ``period`` random words
  repeated twice; the mean next-token loss (nats) on the second copy against the first.
  The score is the drop, first - second: 0 for a model that does not copy, up to the
  first copy's loss for one that copies perfectly.

Associative recall, scored from the logits as well, is :mod:`inference.recall`.
Sequences are drawn from whole-word tokens (alphabetic, two letters or more) of the
model's vocabulary (:func:`word_ids`: the pool ``training/recall_rows.py``'s rows draw
from too), without replacement, with a seeded generator.
"""

from __future__ import annotations

import numpy as np

INDUCTION_PERIOD = 24  # words per copy (two copies: 48 tokens)
INDUCTION_SEQUENCES = 24


def word_ids(vocab: dict[str, int]) -> list[int]:
    """Ids of the whole-word tokens of ``vocab`` (token -> id), sorted (a hash map's order
    changes between processes): alphabetic, two letters or more. The recall and repeat
    rows of ``training/recall_rows.py`` draw from these (``training/train.py``)."""
    return sorted(i for t, i in vocab.items() if t.isalpha() and len(t) > 1)


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """(..., V) logits -> (..., V) log-probabilities, in float64."""
    x = np.asarray(logits, dtype=np.float64)
    x = x - x.max(axis=-1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))


def repeated_sequence(words: list[int], period: int, rng: np.random.Generator) -> list[int]:
    """``period`` distinct random words, then the same ``period`` words again (2 period ids).

    Raises:
        ValueError: if there are fewer than ``period`` words to draw from.
    """
    if len(words) < period:
        raise ValueError(f"need {period} distinct words, the vocabulary has {len(words)}")
    seq = rng.choice(words, size=period, replace=False).tolist()
    return seq + seq


def copy_losses(logits: np.ndarray, ids: list[int], period: int) -> tuple[float, float]:
    """Mean next-token loss (nats) on each copy of a sequence repeated twice.

    Args:
        logits: (T, V) next-token logits for ``ids`` (T = 2 period).
        ids: the T token ids, ``ids[period:] == ids[:period]``.
        period: words per copy (>= 2).

    Returns:
        ``(first, second)``: the mean loss of predicting words 1 .. period-1 of the first
        copy from the words before them, and the same words of the second copy. The
        first word of each copy is left out (no model can predict it).

    Raises:
        ValueError: if the shapes disagree or ``ids`` is not a sequence repeated twice.
    """
    logp = log_softmax(logits)  # (T, V)
    if period < 2 or len(ids) != 2 * period or logp.shape[0] != len(ids):
        raise ValueError(f"need 2 x {period} tokens and logits for each, got {logp.shape}")
    if list(ids[:period]) != list(ids[period:]):
        raise ValueError("ids must be one sequence repeated twice")
    nll = -logp[np.arange(len(ids) - 1), ids[1:]]  # (T - 1,): loss of predicting ids[t + 1]
    first = nll[: period - 1].mean()  # predicts ids[1 : period]
    second = nll[period:].mean()  # predicts ids[period + 1 :]
    return float(first), float(second)


def behavioural_induction(
    logits_of, words: list[int], seed: int = 4, period: int = INDUCTION_PERIOD
) -> dict:
    """The behavioural induction score of a model, averaged over sequences.

    Args:
        logits_of: ids (list of T ints) -> (T, V) logits (an ONNX session or torch model).
        words: whole-word ids to draw from (:func:`word_ids`).
        seed: the generator's seed.
        period: words per copy (a model with a context under 2 x 24 tokens needs fewer).

    Returns:
        ``{"first_copy_loss", "second_copy_loss", "score", "period", "sequences"}``: losses
        in nats per token; score = first - second (nats, higher = more copying).
    """
    rng = np.random.default_rng(seed)
    pairs = []
    for _ in range(INDUCTION_SEQUENCES):
        ids = repeated_sequence(words, period, rng)
        pairs.append(copy_losses(logits_of(ids), ids, period))
    first, second = np.mean(pairs, axis=0)
    return {
        "first_copy_loss": round(float(first), 4),
        "second_copy_loss": round(float(second), 4),
        "score": round(float(first - second), 4),
        "period": period,
        "sequences": INDUCTION_SEQUENCES,
    }
