"""Synthetic recall rows: every scored target is determined by the row itself."""

from __future__ import annotations

import pytest
import torch

from training.recall_rows import IGNORE, mqar_row, recall_batch, repeat_row

WORDS = torch.arange(100, 400)  # (W,)


@pytest.mark.parametrize("n", [1, 4, 16, 31])
def test_an_mqar_row_scores_only_each_querys_value(n):
    x, y = mqar_row(WORDS, 64, n, torch.Generator().manual_seed(n))
    assert len(x) == len(y) == 64
    pairs = dict(zip(x[: 2 * n : 2], x[1 : 2 * n : 2], strict=True))
    assert len(set(x[: 2 * n])) == 2 * n  # distinct keys and values
    scored = [(i, t) for i, t in enumerate(y) if t != IGNORE]
    assert scored and all(i >= 2 * n for i, _ in scored)  # nothing scored among the pairs
    assert all(pairs[x[i]] == t for i, t in scored)  # the value of the key just read


def test_a_repeat_row_scores_the_copies_after_the_first():
    p = 10
    x, y = repeat_row(WORDS, 64, p, torch.Generator().manual_seed(0))
    assert all(t == IGNORE for t in y[:p])
    assert all(y[i] == x[i + 1 - p] for i in range(p, 63))  # the word p back, continued


def test_a_batch_is_long_ids_from_the_vocabulary_and_fails_on_bad_sizes():
    x, y = recall_batch(WORDS, 6, 64, torch.Generator().manual_seed(1))
    assert x.shape == y.shape == (6, 64) and x.dtype == torch.long
    assert ((x >= 100) & (x < 400)).all()
    assert ((y == IGNORE) | ((y >= 100) & (y < 400))).all()
    with pytest.raises(ValueError):
        mqar_row(WORDS, 64, 32, torch.Generator())  # 64 ids of pairs leave no query
    with pytest.raises(ValueError):
        repeat_row(WORDS, 64, 1, torch.Generator())


def test_the_rows_hold_at_most_max_pairs_and_never_the_held_out_words():
    """#46: the card's trained range (rows_max_pairs, 24 at T = 64) is the most pairs a
    batch's MQAR rows hold (read off the rows: distinct keys before the first scored
    query), and the rows drawn from the shipped vocabulary's word pool, as
    training/train.py draws them, never hold a word of the held-out format."""
    import json

    from inference.recall import held_out_words, row_words
    from tests.helpers import EXPORTED
    from training.recall_rows import max_pairs

    vocab = json.loads((EXPORTED / "tokenizer.json").read_text())["model"]["vocab"]
    words = torch.tensor(row_words(vocab))  # (W,)
    assert max_pairs(64, len(words)) == 24 and max_pairs(64, 10) == 5
    x, y = recall_batch(words, 400, 64, torch.Generator().manual_seed(2))  # (400, 64)
    pairs = [int((y[r] != IGNORE).nonzero()[0]) // 2 for r in range(0, 400, 2)]  # MQAR rows
    assert max(pairs) == 24 and min(pairs) == 1
    assert not set(x.flatten().tolist()) & set(held_out_words(vocab))
