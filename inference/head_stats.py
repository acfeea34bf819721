"""Per-head summary scores of an attention array, and the table of them the app shows.

Every function takes ``attn`` of shape (L, H, T, T) (row = query, column = key,
causal, rows sum to 1, or just under 1 for linear attention: see ``min_row_sum`` and
``models/contract.py``) as anything ``np.asarray`` accepts, and returns an (L, H)
float array. numpy only.

Heads are labelled from these scores by ``inference/head_labels.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from inference.head_labels import label_heads

# The induction probe of the app and of the model card (one setting for both, #20 item 15)
INDUCTION_PERIOD = 24  # random tokens in the block that is repeated
INDUCTION_SEQUENCES = 24  # blocks averaged over


def probe_word_ids(vocab: dict[str, int], vocab_size: int, special: set[str]) -> list[int]:
    """Token ids the induction probe draws from: whole alphabetic tokens when the
    vocabulary has any, else every non-special id, else every id below ``vocab_size``;
    sorted (a tokenizer's vocabulary is a hash map whose order changes by process)."""
    kept = {t: i for t, i in vocab.items() if 0 <= i < vocab_size}
    words = sorted(i for t, i in kept.items() if t.isalpha())
    plain = sorted(i for t, i in kept.items() if t not in special)
    return words or plain or list(range(vocab_size))


def induction_probe(
    attend: Callable[[list[int]], np.ndarray],
    word_ids: Sequence[int],
    context_length: int,
    period: int = INDUCTION_PERIOD,
    n_sequences: int = INDUCTION_SEQUENCES,
    seed: int = 0,
) -> np.ndarray:
    """The attention-based induction score of a model, as the app and the model card
    both measure it: :func:`induction_score` averaged over ``n_sequences`` blocks of
    ``period`` random tokens of ``word_ids``, each block repeated twice.

    Args:
        attend: token ids (T,) -> the model's attention (L, H, T, T) (an ONNX session's
            inspect graph, or a torch model).
        word_ids: ids to draw from (:func:`probe_word_ids`).
        context_length: the model's context; the period is cut to fit it (at least 2).

    Returns:
        (L, H) mean scores in [0, 1]; NaN everywhere when the context has no room for a
        repeated block of 2 (fewer than 4 tokens).
    """
    period = max(2, min(period, context_length // 2 - 1))
    rng = np.random.default_rng(seed)
    scores = []
    for _ in range(n_sequences):
        if 2 * period > context_length:
            break
        block = rng.choice(word_ids, size=period, replace=len(word_ids) < period).tolist()
        scores.append(induction_score(attend(block + block), period))  # (L, H)
    if not scores:
        attn = attend([word_ids[0]])  # (L, H, 1, 1): the model's shape
        return np.full(attn.shape[:2], np.nan)
    return np.mean(scores, axis=0)


def _attn(attn: object, min_tokens: int = 1) -> np.ndarray:
    a = np.asarray(attn, dtype=float)
    if a.ndim != 4 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"attn must have shape (L, H, T, T), got {a.shape}")
    if a.shape[-1] < min_tokens:
        raise ValueError(f"need at least {min_tokens} tokens, got T = {a.shape[-1]}")
    return a


def previous_token_score(attn: object) -> np.ndarray:
    """Mean weight on the previous token: mean over queries i >= 1 of ``attn[..., i, i-1]``.

    Args:
        attn: (L, H, T, T) attention weights.

    Returns:
        (L, H) scores in [0, 1]; 1.0 for a pure previous-token head.

    Raises:
        ValueError: if attn is not (L, H, T, T) or T < 2.
    """
    a = _attn(attn, min_tokens=2)
    return np.diagonal(a, offset=-1, axis1=-2, axis2=-1).mean(axis=-1)


def first_token_score(attn: object) -> np.ndarray:
    """Mean weight on the first token ("attention sink"): mean over i >= 1 of ``attn[..., i, 0]``.

    Args:
        attn: (L, H, T, T) attention weights.

    Returns:
        (L, H) scores in [0, 1].

    Raises:
        ValueError: if attn is not (L, H, T, T) or T < 2.
    """
    a = _attn(attn, min_tokens=2)
    return a[..., 1:, 0].mean(axis=-1)


def mean_attention_distance(attn: object) -> np.ndarray:
    """Mean look-back distance in tokens: mean over all rows i of ``sum_j attn[i, j] * (i - j)``.

    Args:
        attn: (L, H, T, T) attention weights.

    Returns:
        (L, H) distances in tokens (0 = attends to itself; row 0 always contributes 0).

    Raises:
        ValueError: if attn is not (L, H, T, T).
    """
    a = _attn(attn)
    t = a.shape[-1]
    idx = np.arange(t)
    dist = idx[:, None] - idx[None, :]
    return (a * dist).sum(axis=-1).mean(axis=-1)


def entropy(attn: object) -> np.ndarray:
    """Mean row entropy in bits: mean over rows of ``-sum_j p log2 p`` (0 log 0 = 0).

    Args:
        attn: (L, H, T, T) attention weights (rows are probability distributions).

    Returns:
        (L, H) entropies in bits; a uniform causal pattern gives ``mean_i log2(i + 1)``.

    Raises:
        ValueError: if attn is not (L, H, T, T).
    """
    a = _attn(attn)
    safe = np.where(a > 0, a, 1.0)
    return -(np.where(a > 0, a * np.log2(safe), 0.0)).sum(axis=-1).mean(axis=-1)


def min_row_sum(attn: object) -> np.ndarray:
    """Smallest row sum: min over queries i of ``sum_j attn[..., i, j]``.

    Softmax rows sum to 1 (up to float32 rounding). Linear attention divides by
    phi(q_i)^T z_i + eps, so its row i sums to phi(q_i)^T z_i / (phi(q_i)^T z_i + eps),
    below 1 where the normalizer phi(q_i)^T z_i is not much larger than eps.

    Args:
        attn: (L, H, T, T) attention weights.

    Returns:
        (L, H) smallest row sums (float64 sums of the given weights).

    Raises:
        ValueError: if attn is not (L, H, T, T).
    """
    return _attn(attn).sum(axis=-1).min(axis=-1)


def induction_score(attn: object, period: int) -> np.ndarray:
    """Induction score on a repeated random sequence.

    The input is a random token sequence of length ``period`` repeated, so token i
    equals token i - period. An induction head at query i attends to the token right
    after the previous occurrence, key ``i - period + 1``.

    Args:
        attn: (L, H, T, T) attention weights, T >= period + 2 (ideally T >= 2 * period).
        period: length of the repeated block, >= 1.

    Returns:
        (L, H) mean over i in [period, T) of ``attn[..., i, i - period + 1]``, in [0, 1].

    Raises:
        ValueError: if attn is not (L, H, T, T), period < 1 or T < period + 2.
    """
    if period < 1:
        raise ValueError(f"period must be >= 1, got {period}")
    a = _attn(attn)
    t = a.shape[-1]
    if t < period + 2:
        raise ValueError(f"induction needs T >= period + 2, got T = {t}, period = {period}")
    rows = np.arange(period, t)
    return a[..., rows, rows - period + 1].mean(axis=-1)


def duplicate_token_score(attn: object, token_ids: object) -> np.ndarray:
    """Weight on earlier copies of the same token, averaged over queries that have one.

    Args:
        attn: (L, H, T, T) attention weights.
        token_ids: (T,) token ids of the input.

    Returns:
        (L, H) mean over queries i with an earlier duplicate of
        ``sum_{j < i, id_j = id_i} attn[..., i, j]``, in [0, 1].

    Raises:
        ValueError: if shapes disagree or no token repeats.
    """
    a = _attn(attn)
    ids = np.asarray(token_ids).reshape(-1)
    t = a.shape[-1]
    if ids.shape[0] != t:
        raise ValueError(f"token_ids has {ids.shape[0]} entries, attn has T = {t}")
    same = (ids[:, None] == ids[None, :]) & np.tri(t, k=-1, dtype=bool)
    rows = same.any(axis=-1)
    if not rows.any():
        raise ValueError("no token repeats, duplicate-token score is undefined")
    return (a * same).sum(axis=-1)[..., rows].mean(axis=-1)


def head_stats_table(
    attn: object,
    period: int | None = None,
    token_ids: object | None = None,
    induction: object | None = None,
) -> pd.DataFrame:
    """One row per head with every score and its label.

    Args:
        attn: (L, H, T, T) attention weights, T >= 2.
        period: if given, add an ``induction`` column (input must be a repeated sequence).
        token_ids: if given and some token repeats, add a ``duplicate_token`` column.
        induction: precomputed (L, H) induction scores (e.g. from a repeated random
            sequence run separately); used instead of ``period``.

    Returns:
        DataFrame with columns layer, head, previous_token, first_token, distance
        (tokens), entropy (bits), [induction], [duplicate_token], label; L * H rows
        ordered by layer then head. Scores are computed one layer at a time (the entropy
        of GPT-2 small's 12 x 12 heads at T = 1024 in one go made 5 GB of float64
        temporaries; one layer's are 1/12 of that).

    Raises:
        ValueError: as the individual scores (bad shape, T < 2, T < period + 2).
    """
    a = np.asarray(attn)  # float32 as given: each layer is made float64 on its own
    _attn(a[:1], min_tokens=2)  # the shape checks, on one layer
    n_layers, n_heads, t, _ = a.shape

    def per_layer(score, *args) -> np.ndarray:  # (L, H); temporaries of one layer at a time
        return np.concatenate([score(a[i : i + 1], *args) for i in range(n_layers)])

    scores = {
        "previous_token": per_layer(previous_token_score),
        "first_token": per_layer(first_token_score),
        "distance": per_layer(mean_attention_distance),
        "entropy": per_layer(entropy),
    }
    if induction is not None:
        scores["induction"] = np.asarray(induction, dtype=float).reshape(n_layers, n_heads)
    elif period is not None:
        scores["induction"] = per_layer(induction_score, period)
    if token_ids is not None:
        ids = np.asarray(token_ids).reshape(-1)
        if len(np.unique(ids)) < len(ids):
            scores["duplicate_token"] = per_layer(duplicate_token_score, ids)
    labels = label_heads(scores, n_tokens=t)
    layer, head = np.meshgrid(np.arange(n_layers), np.arange(n_heads), indexing="ij")
    data = {"layer": layer.ravel(), "head": head.ravel()}
    data.update({k: v.ravel() for k, v in scores.items()})
    data["label"] = labels.ravel()
    return pd.DataFrame(data)
