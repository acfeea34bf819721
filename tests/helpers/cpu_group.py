"""Run two commands at once, the first ahead of the second for the CPU.

``make test`` runs the hostile-upload and fair-share suites, which time one session beside
another's attack, *beside* the other tests instead of after them: the other tests take only
the CPU the suites leave (about 70 % of the machine during their 2.5 minutes, measured),
and the suites' own processes (their servers, Chromium, the upload workers at SCHED_IDLE)
share the CPU among themselves as on a machine of their own.

How: Linux's cgroup v1 ``cpu`` controller. Both commands run in one group
(``attnviz-tests-<pid>``, ``cpu.shares`` :data:`SHARES` against the other processes' 1024
each), the first in its child group ``ahead``, the second in ``behind``, whose ``cpu.idle``
is 1 until the first command ends: an idle group runs only when its siblings leave a core
free, even for their own SCHED_IDLE processes (the kernel's
Documentation/admin-guide/cgroup-v2.rst, "cpu.idle", which v1's ``cpu`` controller has
too). ``cpuacct`` groups of the same names count each group's CPU time
(``bench.cpu_share``). Where the groups cannot be made (not root, cgroup v2 only, a kernel
without ``cpu.idle``), :func:`why_not` says why in one line and ``make test`` runs the
suites after the others, as before.

Usage::

    python -m tests.helpers.cpu_group --check     # exit 0, or 1 with why not
    python -m tests.helpers.cpu_group --ahead 'SHELL COMMAND' --behind 'SHELL COMMAND'
        # 0 when both exit 0; else the first nonzero status (128 + N: killed by signal N)
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from pathlib import Path

from bench import cpu_share

ROOTS = (cpu_share.CPU, cpu_share.CPUACCT)  # cgroup v1 mounts: the ones bench.cpu_share reads
# The pair's weight against each other process's 1024 (or a whole session's, where the
# kernel groups a session's processes: sched_autogroup). Beside two busy loops started from
# one shell (one autogroup), before the groups, the tests took about 67 % of the machine;
# in the pair at 4,096 they took 88 %, at 2,048 about 80 % (CPU time counted by cpuacct).
SHARES = 2048
CHILDREN = ("ahead", "behind")


def make(name: str | None = None) -> list[Path]:
    """Create the group ``name`` and its children :data:`CHILDREN` under each controller
    (once where ``cpu`` and ``cpuacct`` are mounted together); ``behind`` idle. The
    parent folders, ``cpu``'s first.

    Raises:
        OSError: a controller is not mounted, the group cannot be made (not root), or the
        kernel has no ``cpu.idle`` (before Linux 5.15).
    """
    name = name or f"attnviz-tests-{os.getpid()}"
    made: list[Path] = []
    try:
        for root in ROOTS:
            if not (root / "cgroup.procs").exists():
                raise FileNotFoundError(f"{root}: no cgroup v1 controller mounted there")
            parent = (root / name).resolve()
            if parent in made:  # "cpu,cpuacct" mounted together: one tree
                continue
            parent.mkdir()
            made.append(parent)
            for child in CHILDREN:
                (parent / child).mkdir()
        (made[0] / "cpu.shares").write_text(str(SHARES))
        set_idle(made, True)
    except OSError:
        remove(made)
        raise
    return made


def set_idle(parents: list[Path], idle: bool) -> None:
    """``behind``'s ``cpu.idle``: 1 (runs only on CPU ``ahead`` leaves) or 0."""
    (parents[0] / "behind" / "cpu.idle").write_text("1" if idle else "0")


def join(parents: list[Path], child: str) -> None:
    """Move this process into ``child`` under each parent (its children follow)."""
    for parent in parents:
        (parent / child / "cgroup.procs").write_text(str(os.getpid()))


def remove(parents: list[Path]) -> None:
    """Remove the groups, moving any process still in one to the root group first."""
    for parent in parents:
        for folder in [*(parent / c for c in CHILDREN), parent]:
            try:
                for pid in (folder / "cgroup.procs").read_text().split():
                    (parent.parent / "cgroup.procs").write_text(pid)
                folder.rmdir()
            except OSError:
                pass  # a process that exited meanwhile, or a folder not made


def why_not() -> str | None:
    """None when the groups can be made here; else one line saying why not."""
    try:
        remove(make(f"attnviz-check-{os.getpid()}"))
    except OSError as exc:
        return f"no CPU groups for the timed suites ({exc}): they run after the other tests"
    return None


def run(ahead: str, behind: str) -> int:
    """Run the shell commands ``ahead`` and ``behind`` at once in their groups
    (:func:`make`); ``behind`` stops being idle when ``ahead`` exits. SIGINT and SIGTERM
    are passed on to both; the groups are removed after. Returns 0, or the first nonzero
    exit status (-N: killed by signal N).

    Raises:
        OSError: the groups cannot be made (:func:`why_not` says why).
    """
    parents = make()
    try:
        procs = [
            subprocess.Popen(["/bin/sh", "-c", cmd], preexec_fn=lambda c=child: join(parents, c))
            for child, cmd in zip(CHILDREN, (ahead, behind), strict=True)
        ]
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda s, _f: [p.send_signal(s) for p in procs])
        first = procs[0].wait()
        set_idle(parents, False)
        second = procs[1].wait()
        print(f"cpu_group: CPU time used: {used(parents)}")
        return first or second
    finally:
        remove(parents)


def used(parents: list[Path]) -> str:
    """Each child group's CPU time so far (``cpuacct.usage``), e.g. ``ahead 98 s,
    behind 1,204 s``; a group whose count cannot be read is left out."""
    acct = parents[-1]  # cpuacct's tree (the only one where mounted together)
    out = []
    for child in CHILDREN:
        try:
            out.append(f"{child} {int((acct / child / 'cpuacct.usage').read_text()) / 1e9:,.0f} s")
        except (OSError, ValueError):
            continue
    return ", ".join(out) or "not counted"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.helpers.cpu_group")
    parser.add_argument("--check", action="store_true", help="say whether groups can be made")
    parser.add_argument("--ahead", help="the shell command that goes first for the CPU")
    parser.add_argument("--behind", help="the shell command that takes what it leaves")
    args = parser.parse_args(argv)
    if args.check:
        reason = why_not()
        if reason:
            print(reason)
        return 1 if reason else 0
    if args.ahead is None or args.behind is None:
        parser.error("give --check, or both --ahead and --behind")
    try:
        status = run(args.ahead, args.behind)
    except OSError as exc:
        print(f"cpu_group: {exc}")
        return 1
    return 128 - status if status < 0 else status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
