"""Synthetic training rows that reward recall: multi-query associative recall (MQAR) and
repeated random sequences, mixed into the corpus batches.

Zoology (Arora et al. 2023, arXiv 2312.04927) trains recall on purpose: a model that only
reads natural text has little reason to store arbitrary key -> value pairs, so a
recurrent model with the capacity to recall (the delta rule) may never learn to use it.
Each row is T + 1 word ids of the model's vocabulary; its targets are -100
(``F.cross_entropy``'s ignore_index) except where the answer is determined by the row:

* **MQAR:** k_1 v_1 ... k_n v_n, then (k, v) query pairs drawn from the n keys until the
  row is full; the loss is on each query's value (the format the model card's
  ``inference.recall.recall_scores`` measures: pairs, then a key).
* **Repeat:** ``p`` random words, repeated to the end of the row; the loss is on every
  word after the first copy (the behavioural induction score's format, Olsson et al. 2022).
"""

from __future__ import annotations

import torch

IGNORE = -100  # F.cross_entropy's default ignore_index


def mqar_row(words: torch.Tensor, T: int, n: int, g: torch.Generator) -> tuple[list, list]:
    """One MQAR row of ``n`` pairs: (inputs (T,), targets (T,)) as lists of ids.

    Raises:
        ValueError: if 2 n + 2 > T + 1 (no room for a query) or 2 n > len(words).
    """
    if 2 * n + 2 > T + 1 or 2 * n > len(words):
        raise ValueError(f"{n} pairs do not fit {T + 1} tokens of {len(words)} words")
    drawn = words[torch.randperm(len(words), generator=g)[: 2 * n]].tolist()  # (2n,)
    keys, values = drawn[:n], drawn[n:]
    row = [t for pair in zip(keys, values, strict=True) for t in pair]  # (2n,)
    answered = [False] * len(row)
    while len(row) < T + 1:
        a = int(torch.randint(n, (1,), generator=g))
        row += [keys[a], values[a]]
        answered += [False, True]
    row, answered = row[: T + 1], answered[: T + 1]
    targets = [t if answered[i + 1] else IGNORE for i, t in enumerate(row[1:])]  # (T,)
    return row[:-1], targets


def repeat_row(words: torch.Tensor, T: int, p: int, g: torch.Generator) -> tuple[list, list]:
    """``p`` distinct random words repeated to T + 1 ids: (inputs (T,), targets (T,)), the
    targets ignored on the first copy.

    Raises:
        ValueError: if p < 2, p > T or p > len(words).
    """
    if not 2 <= p <= min(T, len(words)):
        raise ValueError(f"period {p} must be 2..{min(T, len(words))}")
    copy = words[torch.randperm(len(words), generator=g)[:p]].tolist()  # (p,)
    row = (copy * (T // p + 2))[: T + 1]
    targets = [t if i >= p else IGNORE for i, t in enumerate(row[1:])]  # (T,)
    return row[:-1], targets


def max_pairs(T: int, n_words: int) -> int:
    """The largest n an MQAR row of :func:`recall_batch` holds: T // 2 - 8 (room for
    queries), capped by ``n_words`` // 2 distinct words (24 at the shipped T = 64)."""
    return max(1, min(T // 2 - 8, n_words // 2))


def recall_batch(
    words: torch.Tensor, rows: int, T: int, g: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """``rows`` synthetic rows, alternately MQAR (n = 1 .. :func:`max_pairs` pairs) and
    repeats (period 4 .. T // 2): inputs (rows, T), targets (rows, T)."""
    most = max_pairs(T, len(words))
    xs, ys = [], []
    for r in range(rows):
        if r % 2 == 0:
            n = int(torch.randint(1, most + 1, (1,), generator=g))
            x, y = mqar_row(words, T, n, g)
        else:
            p = int(torch.randint(4, max(5, T // 2 + 1), (1,), generator=g))
            x, y = repeat_row(words, T, min(p, len(words)), g)
        xs.append(x)
        ys.append(y)
    return torch.tensor(xs, dtype=torch.long), torch.tensor(ys, dtype=torch.long)
