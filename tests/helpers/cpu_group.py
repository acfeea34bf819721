"""Run a command in a CPU group ahead of every other process on the machine.

``make test`` runs the hostile-upload and fair-share suites, which time one session
beside another's attack, in such a group *beside* the other tests instead of after them:
the other tests take only the CPU the suites leave (about 70 % of the machine during their
2.5 minutes, measured), and the suites' own processes (their servers, Chromium, the upload
workers at SCHED_IDLE) share the CPU among themselves as on a machine of their own.

How: Linux's cgroup v1 ``cpu`` controller. A group's ``cpu.shares`` is its weight against
its siblings, each process of the root group weighing 1024; a group of the largest weight
(262,144) gets a core whenever one of its processes is ready to run, against the 1024 of
each other test process (the kernel's Documentation/scheduler/sched-design-CFS.rst, "group
scheduling"). The ``cpuacct`` controller's group beside it counts the group's CPU time
(``bench.cpu_share``). Where the groups cannot be made (not root, cgroup v2 only, no such
controller), :func:`why_not` says why in one line and ``make test`` runs the suites after
the others, as before.

Usage::

    python -m tests.helpers.cpu_group --check       # exit 0, or 1 with why not
    python -m tests.helpers.cpu_group -- CMD ARG...  # CMD's exit status (128 + N: signal N)
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

ROOTS = (Path("/sys/fs/cgroup/cpu"), Path("/sys/fs/cgroup/cpuacct"))  # cgroup v1 mounts
SHARES = 262_144  # cpu.shares' largest value (the kernel's MAX_SHARES)


def make(name: str | None = None) -> list[Path]:
    """Create the group (``cpu``, and ``cpuacct`` where it is mounted apart) with
    ``cpu.shares`` = :data:`SHARES`; its folders.

    Raises:
        OSError: a controller is not mounted, or the group cannot be made (not root).
    """
    name = name or f"attnviz-first-{os.getpid()}"
    folders: list[Path] = []
    for root in ROOTS:
        if not (root / "cgroup.procs").exists():
            raise FileNotFoundError(f"{root}: no cgroup v1 controller mounted there")
        folder = (root / name).resolve()
        if folder in folders:  # "cpu,cpuacct" mounted together: one folder
            continue
        try:
            folder.mkdir()
            folders.append(folder)
        except OSError:
            remove(folders)
            raise
    try:
        (folders[0] / "cpu.shares").write_text(str(SHARES))
    except OSError:
        remove(folders)
        raise
    return folders


def join(folders: list[Path], pid: int = 0) -> None:
    """Move process ``pid`` (0: this one) into each folder's group (its children follow)."""
    for folder in folders:
        (folder / "cgroup.procs").write_text(str(pid or os.getpid()))


def remove(folders: list[Path]) -> None:
    """Remove the groups, moving any process still in one to its parent group first."""
    for folder in folders:
        try:
            for pid in (folder / "cgroup.procs").read_text().split():
                (folder.parent / "cgroup.procs").write_text(pid)
            folder.rmdir()
        except OSError:
            pass  # a process that exited meanwhile, or the group already gone


def why_not() -> str | None:
    """None when a group can be made here; else one line saying why not."""
    try:
        remove(make(f"attnviz-check-{os.getpid()}"))
    except OSError as exc:
        return f"no CPU group for the timed suites ({exc}): they run after the other tests"
    return None


def run(cmd: list[str]) -> int:
    """Run ``cmd`` in a new group (:func:`make`); its exit status (-N: killed by signal N).
    SIGINT and SIGTERM are passed on to it; the group is removed after.

    Raises:
        OSError: the group cannot be made (:func:`why_not` says why), or ``cmd`` not found.
    """
    folders = make()
    try:
        proc = subprocess.Popen(cmd, preexec_fn=lambda: join(folders))  # noqa: PLW1509
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda s, _f: proc.send_signal(s))
        return proc.wait()
    finally:
        remove(folders)


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        reason = why_not()
        if reason:
            print(reason)
        return 1 if reason else 0
    if len(argv) < 2 or argv[0] != "--":
        print("usage: python -m tests.helpers.cpu_group --check | -- CMD [ARG...]")
        return 2
    try:
        status = run(argv[1:])
    except OSError as exc:
        print(f"cpu_group: {exc}")
        return 1
    return 128 - status if status < 0 else status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
