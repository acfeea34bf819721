"""The server's budget for upload workers: how many run a request at once, and how much
memory they may ask for in all (issue #25).

Each worker is capped on its own (``RLIMIT_AS``, CPU seconds), but ten students uploading
at once started ten workers: 15 GB on a 23 GB machine. A request is admitted when fewer
than ``WORKER_SLOTS`` requests run and their memory caps, plus its own, stay within
``WORKERS_MEMORY_BYTES`` (half the machine by default); otherwise it waits its turn, first
come first served, and its caller hears its place in line. A request that cannot be
admitted within ``QUEUE_WAIT_S`` is refused in one line; a request larger than the whole
budget runs when nothing else does. The worker's own deadline starts once it is admitted.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from upload.errors import WorkerError
from upload.limits import QUEUE_WAIT_S, WORKER_SLOTS, WORKERS_MEMORY_BYTES

POLL_S = 0.5  # how often a waiting caller hears its place in line


def in_line(k: int) -> str:
    """The line a waiting student sees."""
    return f"your upload is number {k} in line (the server runs {WORKER_SLOTS} at a time)…"


class WorkerBudget:
    """At most ``slots`` admitted requests, whose memory caps sum to at most ``memory_bytes``.

    Thread-safe; waiting callers are admitted in the order they arrived.
    """

    def __init__(self, slots: int = WORKER_SLOTS, memory_bytes: int = WORKERS_MEMORY_BYTES):
        self.slots, self.memory_bytes = slots, memory_bytes
        self.running, self.used_bytes, self.peak_bytes = 0, 0, 0
        self._line: list[int] = []
        self._tickets = itertools.count()
        self._cond = threading.Condition()

    def _fits(self, cost: int) -> bool:
        if self.running == 0:
            return True  # even one larger than the budget runs, alone
        return self.running < self.slots and self.used_bytes + cost <= self.memory_bytes

    @contextmanager
    def admit(
        self,
        cost: int,
        what: str,
        on_wait: Callable[[int], None] | None = None,
        timeout_s: float = QUEUE_WAIT_S,
    ) -> Iterator[None]:
        """Hold a place for a request of ``cost`` bytes (its worker's memory cap) while the
        block runs. ``on_wait(k)`` is called, outside the lock, every ``POLL_S`` while the
        request is number ``k`` in line.

        Raises:
            WorkerError: not admitted within ``timeout_s`` (one line naming ``what``).
        """
        ticket, deadline = next(self._tickets), time.monotonic() + timeout_s
        with self._cond:
            self._line.append(ticket)
        try:
            while True:
                with self._cond:
                    if self._line[0] == ticket and self._fits(cost):
                        self._line.pop(0)
                        self.running += 1
                        self.used_bytes += cost
                        self.peak_bytes = max(self.peak_bytes, self.used_bytes)
                        break
                    k = self._line.index(ticket) + 1
                    if time.monotonic() >= deadline:
                        raise WorkerError(
                            f"{what}: not started: the server is busy with other uploads "
                            f"(yours was number {k} in line for {timeout_s:g} s); try again "
                            "in a few minutes"
                        )
                    self._cond.wait(POLL_S)
                if on_wait is not None:
                    on_wait(k)
        except BaseException:
            with self._cond:
                if ticket in self._line:
                    self._line.remove(ticket)
                self._cond.notify_all()
            raise
        try:
            yield
        finally:
            with self._cond:
                self.running -= 1
                self.used_bytes -= cost
                self._cond.notify_all()

    def waiting(self) -> int:
        """How many requests wait in line now."""
        with self._cond:
            return len(self._line)


SERVER = WorkerBudget()  # the server's upload workers (the command line does not use it)
