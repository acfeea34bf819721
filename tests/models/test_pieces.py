"""Paced pieces (models/pieces.py): every entry once, in order, and the loop sleeps as
long as the caller worked on each piece, so other threads get the GIL meanwhile."""

from __future__ import annotations

import time

import pytest

from models import pieces as p


def test_pieces_cover_every_entry_once_in_order_and_zip_equal_lengths():
    seq = list(range(3 * p.PIECE + 7))
    assert [x for part in p.pieces(seq) for x in part] == seq
    assert [len(part) for part in p.pieces(seq)] == [p.PIECE] * 3 + [7]
    pairs = list(p.pieces(seq, [str(x) for x in seq], size=100))
    assert all(list(map(str, a)) == list(b) for a, b in pairs) and len(pairs) == 16
    assert list(p.pieces([])) == []
    with pytest.raises(ValueError, match="different lengths"):
        list(p.pieces([1, 2], [1]))


def _work(items, seconds: float) -> float:
    """Busy-wait ``seconds`` per item (a pure Python loop, holding the GIL); the loop's
    duration."""
    start = time.perf_counter()
    for _ in items:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass
    return time.perf_counter() - start


def test_a_paced_loop_sleeps_as_long_as_it_worked_up_to_a_cap():
    """After each item but the last, a sleep (GIL released) at least as long as the work:
    the loop takes about twice its work. A long item's pause is capped."""
    assert _work(p.paced(range(20)), 0.002) >= 0.002 * (20 + 19)
    assert _work(range(20), 0.002) < 0.002 * (20 + 19)  # unpaced: no pauses
    assert _work(p.paced(range(2)), 0.1) < 0.2 + p.MAX_PAUSE_S + 0.1  # one capped pause
