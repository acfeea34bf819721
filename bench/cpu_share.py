"""How much of the machine's CPU a process's work could have had over an interval.

The fair-share suite (``tests/e2e/test_fair_share.py``) accepts an upload refused "too
busy" only when other work held the cores: the upload worker runs at SCHED_IDLE and takes
any core nobody else wants. Alone on a machine, that is the idle share. ``make test`` runs
the timed suites in a CPU group beside an idle sibling group that holds the other tests
(``tests/helpers/cpu_group.py``): the idle group runs only on CPU the suites leave, so
what it used was free to them too. Any other process (another job on the machine) does
not yield, and counts as busy.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import psutil

CPU = Path("/sys/fs/cgroup/cpu")  # cgroup v1's CPU controller (cpu.idle)
CPUACCT = Path("/sys/fs/cgroup/cpuacct")  # and its CPU accounting (cpuacct.usage)


class Reading(NamedTuple):
    machine: object  # psutil.cpu_times(): seconds, all cores
    yielding_ns: int  # CPU time of the idle sibling groups of this process's group, ns


def group_path(proc_cgroup: str | None = None) -> str | None:
    """This process's cpuacct group, relative to the hierarchy's root (from
    ``/proc/self/cgroup``, or ``proc_cgroup``'s text); None for the root group, for
    cgroup v2 alone, or when it cannot be read."""
    try:
        text = proc_cgroup if proc_cgroup is not None else Path("/proc/self/cgroup").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        _, controllers, path = line.split(":", 2)
        if "cpuacct" in controllers.split(","):
            return path.strip("/") or None
    return None


def yielding_ns(path: str | None = None) -> int:
    """The CPU time (ns) used so far by the idle sibling groups (``cpu.idle`` 1) of the
    group ``path`` (default: this process's, :func:`group_path`); 0 in the root group."""
    path = group_path() if path is None else path
    if not path or "/" not in path:
        return 0
    parent = path.rsplit("/", 1)[0]
    try:
        siblings = list((CPUACCT / parent).iterdir())
    except OSError:
        return 0  # the group is gone, or cpuacct is mounted elsewhere
    total = 0
    for sibling in siblings:
        name = f"{parent}/{sibling.name}"
        try:
            if name != path and (CPU / name / "cpu.idle").read_text().strip() == "1":
                total += int((sibling / "cpuacct.usage").read_text())
        except (OSError, ValueError):
            continue  # not a group, or gone
    return total


def read() -> Reading:
    """The machine's CPU times and the yielding groups' CPU time, now."""
    return Reading(psutil.cpu_times(), yielding_ns())


def free_share(before: Reading, after: Reading) -> float:
    """The share (0-1) of the machine's CPU time (all cores) between two readings that
    this process's work could have had: idle (and I/O wait), or used by an idle sibling
    group (:func:`yielding_ns`), over the total."""
    fields = before.machine._fields
    total = sum(getattr(after.machine, f) - getattr(before.machine, f) for f in fields)
    if total <= 0:
        return 0.0
    idle = sum(
        getattr(after.machine, f) - getattr(before.machine, f)
        for f in ("idle", "iowait")
        if f in fields
    )
    yielded = (after.yielding_ns - before.yielding_ns) / 1e9
    return round(min(1.0, (idle + yielded) / total), 3)
