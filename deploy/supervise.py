"""Keep child processes running: one that exits is started again, after a back-off.

``deploy/replicas.py`` (``make serve-replicas``) runs its app servers and nginx under a
:class:`Supervisor`. A child that exits is logged in one line and started again after
``BACKOFF_S[k]`` seconds, where ``k`` counts its exits in a row that came less than
``STEADY_S`` seconds after its (re)start: 1, 2, 4 ... up to 60 s, so a replica that
crashes on start does not spin, and one that ran for a while comes back within a second.
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

BACKOFF_S = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 60.0)
STEADY_S = 60.0  # a child that ran this long before exiting restarts after BACKOFF_S[0]
POLL_S = 0.25


@dataclass
class Child:
    """One supervised process: ``name`` (for the log), ``start()`` -> a new process."""

    name: str
    start: Callable[[], subprocess.Popen]
    proc: subprocess.Popen | None = None
    started: float = 0.0
    quick_exits: int = 0  # exits in a row within STEADY_S of a start
    restarts: int = 0
    due: float | None = None  # when the pending restart is due (monotonic seconds)


def backoff_s(quick_exits: int) -> float:
    """Seconds before a restart, after ``quick_exits`` quick exits in a row (0: first)."""
    return BACKOFF_S[min(quick_exits, len(BACKOFF_S) - 1)]


class Supervisor:
    """Watches ``children`` (already started) in a thread of its own until :meth:`close`;
    ``say(line)`` receives one line per exit (default: print, flushed)."""

    def __init__(self, children: list[Child], say: Callable[[str], None] | None = None):
        self.children = children
        self._say = say or (lambda line: print(line, flush=True))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="supervisor", daemon=True)

    def start(self) -> Supervisor:
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop watching (no restart after this returns); the caller stops the children."""
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(POLL_S):
            now = time.monotonic()
            for child in self.children:
                self._check(child, now)

    def _check(self, child: Child, now: float) -> None:
        if child.due is not None:
            if now >= child.due and not self._stop.is_set():
                child.due = None
                child.restarts += 1
                child.proc, child.started = child.start(), time.monotonic()
            return
        code = child.proc.poll() if child.proc is not None else None
        if code is None:
            return
        ran = now - child.started
        child.quick_exits = child.quick_exits + 1 if ran < STEADY_S else 0
        wait = backoff_s(child.quick_exits - 1 if child.quick_exits else 0)
        child.due = now + wait
        line = (
            f"{child.name} (pid {child.proc.pid}) exited with code {code} after {ran:.0f} s; "
            f"restarting it in {wait:.0f} s (restart {child.restarts + 1})"
        )
        self._say(line)
