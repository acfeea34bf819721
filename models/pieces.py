"""Work over a large vocabulary in pieces: each C call short, the GIL handed on between.

A C loop (``set(map(...))``, ``dict(zip(...))``, ``json.loads``) over 262,144 entries holds
the GIL 10-40 ms in one call. Another session's rerun gives the GIL up at every message
it sends and every onnxruntime or numpy call, and each time waits for the running call to
end before it goes on: a few such calls in a row made a 50 ms rerun take 0.5-0.9 s
(issue #25). A piece of ``PIECE`` entries takes well under a millisecond.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

PIECE = 2048  # entries per C call


def pieces(seq: Sequence, size: int = PIECE) -> Iterator[Sequence]:
    """``seq`` in slices of ``size`` entries (the last one shorter)."""
    for i in range(0, len(seq), size):
        yield seq[i : i + size]
