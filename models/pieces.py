"""Work over a large vocabulary in pieces, paced: each C call short, and the server's
other sessions first between them.

A C loop (``set(map(...))``, ``dict(zip(...))``, ``json.loads``) over 262,144 entries holds
the GIL 10-40 ms in one call. Another session's rerun gives the GIL up at every message
it sends and every onnxruntime or numpy call, and each time waits for the running call to
end before it goes on: a few such calls in a row made a 50 ms rerun take 0.5-0.9 s
(issue #25). A piece of ``PIECE`` entries takes a fraction of a millisecond.

Short calls are not enough: while the upload's thread computes, every one of the other
rerun's hand-backs still waits up to the switch interval (1 ms, ``ui.server_start``) for
the GIL, and a rerun hands it back hundreds of times. So after each piece the loop
sleeps as long as the piece took (:data:`PACE`): the bulk work gets at most half the
interpreter, and the other threads take the GIL at once while it sleeps. Measured on a
model of a rerun (200 hand-backs of 0.2 ms) beside a loop decoding JSON pieces:
55 ms alone, 330 ms beside 2,048-entry pieces unpaced, 85 ms beside 512-entry pieces
paced at 1.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from typing import TypeVar

PIECE = 512  # entries per C call
PACE = 1.0  # seconds of sleep per second of work, after each piece of a long loop
MAX_PAUSE_S = 0.02  # never sleeps longer than this after one piece

T = TypeVar("T")


def paced(items: Iterable[T]) -> Iterator[T]:
    """``items``, one at a time; after the caller's work on each one but the last, a sleep
    of ``PACE`` times that work's duration (at most ``MAX_PAUSE_S``), the GIL released.
    The work's duration counts any wait for the GIL: on a busy server, the pauses grow."""
    items = iter(items)
    item = next(items, _END)
    while item is not _END:
        start = time.perf_counter()
        yield item
        item = next(items, _END)
        if item is not _END:
            time.sleep(min(PACE * (time.perf_counter() - start), MAX_PAUSE_S))


_END = object()


def pieces(*seqs: Sequence, size: int = PIECE) -> Iterator:
    """``seqs`` (one, or several of one length) in slices of ``size`` entries (the last
    one shorter), :func:`paced`: each slice, or a tuple of the slices at one place.

    Raises:
        ValueError: if several sequences differ in length.
    """
    if len({len(seq) for seq in seqs}) > 1:
        raise ValueError("pieces of sequences of different lengths")
    starts = range(0, len(seqs[0]), size)
    if len(seqs) == 1:
        return paced(seqs[0][i : i + size] for i in starts)
    return paced(tuple(seq[i : i + size] for seq in seqs) for i in starts)
