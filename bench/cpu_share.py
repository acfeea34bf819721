"""How much of the machine's CPU a process's work could have had over an interval.

The fair-share suite (``tests/e2e/test_fair_share.py``) accepts an upload refused "too
busy" only when other work held the cores: the upload worker runs at SCHED_IDLE and takes
any core nobody else wants. Alone on a machine, that is the idle share. In a CPU group ahead
of the rest (``make test`` runs the timed suites so: ``tests/helpers/cpu_group.py``),
every process outside the group yields to it, so the CPU they used was free to the group
too: the free share is then everything but the group's own use.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import psutil

CPUACCT = Path("/sys/fs/cgroup/cpuacct")  # cgroup v1's CPU accounting


class Reading(NamedTuple):
    machine: object  # psutil.cpu_times(): seconds, all cores
    group_ns: int | None  # the process's cpuacct group's CPU time, ns (None: the root group)


def group_folder(proc_cgroup: str | None = None) -> Path | None:
    """This process's cpuacct group (from ``/proc/self/cgroup``, or ``proc_cgroup``'s
    text), or None when it is the root group or cannot be read."""
    try:
        text = proc_cgroup if proc_cgroup is not None else Path("/proc/self/cgroup").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        _, controllers, path = line.split(":", 2)
        if "cpuacct" in controllers.split(",") and path not in ("", "/"):
            folder = CPUACCT / path.lstrip("/")
            return folder if (folder / "cpuacct.usage").exists() else None
    return None


def read() -> Reading:
    """The machine's CPU times and this process's group's CPU time, now."""
    folder = group_folder()
    group = int((folder / "cpuacct.usage").read_text()) if folder else None
    return Reading(psutil.cpu_times(), group)


def free_share(before: Reading, after: Reading) -> float:
    """The share (0-1) of the machine's CPU time (all cores) between two readings that
    this process's work could have had: the idle share (idle and I/O wait over the total),
    or, in a CPU group of its own, 1 minus the group's own use over the total."""
    fields = before.machine._fields
    total = sum(getattr(after.machine, f) - getattr(before.machine, f) for f in fields)
    if total <= 0:
        return 0.0
    if before.group_ns is not None and after.group_ns is not None:
        used = (after.group_ns - before.group_ns) / 1e9
        return round(min(1.0, max(0.0, 1 - used / total)), 3)
    idle = sum(
        getattr(after.machine, f) - getattr(before.machine, f)
        for f in ("idle", "iowait")
        if f in fields
    )
    return round(idle / total, 3)
