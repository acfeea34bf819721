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


def _pauses(items, seconds: float) -> list[float]:
    """Busy-wait ``seconds`` per item (a pure Python loop, holding the GIL); the time from
    the end of each item's work to the start of the next one's."""
    pauses, end = [], None
    for _ in items:
        if end is not None:
            pauses.append(time.perf_counter() - end)
        stop = time.perf_counter() + seconds
        while time.perf_counter() < stop:
            pass
        end = time.perf_counter()
    return pauses


def test_a_paced_loop_sleeps_as_long_as_it_worked_up_to_a_cap():
    """After each item but the last, a sleep (GIL released) at least as long as the work
    (the work as measured: a busy machine only lengthens it); a long item's pause is
    capped below its work."""
    pauses = _pauses(p.paced(range(20)), 0.002)
    assert len(pauses) == 19 and min(pauses) >= 0.002
    # unpaced: no pause (the median: on a busy machine one gap may hold a preemption, 5.7 ms seen)
    unpaced = sorted(_pauses(range(20), 0.002))
    assert unpaced[len(unpaced) // 2] < 0.002
    assert 0.1 > _pauses(p.paced(range(2)), 0.1)[0] >= p.MAX_PAUSE_S
