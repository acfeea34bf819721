"""A worker request's deadline that follows the CPU the worker got (Linux ``/proc``), so
that waiting for a CPU the server's students use is not held against an upload."""

from __future__ import annotations

import os
import time

from upload.limits import WAIT_FACTOR

_TICK_S = 1 / os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 0.01


def process_state(pid: int) -> tuple[str, float] | None:
    """(state letter, CPU seconds used by all its threads) of process ``pid`` from
    ``/proc/<pid>/stat`` (Linux; "R" is running or waiting for a CPU); None where unreadable."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
        fields = stat[stat.rindex(")") + 2 :].split()
        return fields[0], (int(fields[11]) + int(fields[12])) * _TICK_S
    except (OSError, ValueError, IndexError):
        return None


def run_queue_wait(pid: int) -> float | None:
    """Seconds the threads of process ``pid`` have spent runnable but waiting for a CPU,
    summed over its threads (the second field of ``/proc/<pid>/task/*/schedstat``, in
    ns; Linux); None where unreadable."""
    try:
        total = 0
        for task in os.scandir(f"/proc/{pid}/task"):
            with open(f"{task.path}/schedstat") as f:
                total += int(f.read().split()[1])
        return total / 1e9
    except (OSError, ValueError, IndexError):
        return None


class Deadline:
    """A request's deadline (``time.monotonic()`` seconds) set by the worker's CPU time:
    ``budget_s`` seconds of CPU, and at most ``WAIT_FACTOR`` times that on the wall clock.
    Called by ``protocol.read_exact`` whenever it is reached, it moves by the time the
    worker did not run.

    A SCHED_IDLE worker gets a CPU only when the server's own threads leave one free, so
    on a busy server it waits; that is the server putting students first, not the upload
    being slow. Where /proc cannot be read, the deadline is ``budget_s`` of wall clock.

    With ``follow_waits`` (the command line's normal-priority worker on its user's own
    computer) the wall-clock cap is ``WAIT_FACTOR`` times the budget *plus* every second
    the worker's threads waited for a CPU (:func:`run_queue_wait`): the allowance follows
    the CPU the worker actually got, so a computer busy with other work (two training
    runs) slows the conversion down but never ends it; only a worker that neither runs
    nor waits for a CPU (stuck) reaches the cap.
    """

    def __init__(self, pid: int, budget_s: float, follow_waits: bool = False):
        self.pid, self.budget_s, self.start = pid, budget_s, time.monotonic()
        first = process_state(pid)
        self._cpu0 = None if first is None else first[1]
        self._wait0 = run_queue_wait(pid) if follow_waits else None
        self.used_s = 0.0  # CPU seconds the worker used on this request so far
        self.waited_s = 0.0  # seconds it waited for a CPU (follow_waits only)

    def __call__(self) -> float:
        now = process_state(self.pid)
        if now is None or self._cpu0 is None:
            return self.start + self.budget_s
        self.used_s = now[1] - self._cpu0
        elapsed = time.monotonic() - self.start
        cap = WAIT_FACTOR * self.budget_s
        if self._wait0 is not None and (wait := run_queue_wait(self.pid)) is not None:
            self.waited_s = min(wait - self._wait0, elapsed)  # threads may wait side by side
            cap += self.waited_s
        return self.start + min(elapsed + self.budget_s - self.used_s, cap)

    @property
    def busy(self) -> bool:
        """Whether the wall-clock cap ended the request while the worker still had CPU
        budget left and was waiting for a CPU (state "R"), not computing past its budget.
        Never with ``follow_waits``: its cap already grew by every wait."""
        if self._wait0 is not None:
            return False
        state = process_state(self.pid)
        return state is not None and state[0] == "R" and self.used_s < self.budget_s
