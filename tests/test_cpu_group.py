"""``make test``'s CPU group for the timed suites (``tests/helpers/cpu_group.py``): where
one can be made, a process in it gets a core even at SCHED_IDLE beside two busy loops
outside it; where none can, one line says why and ``make test`` runs the suites after
the others."""

from __future__ import annotations

import subprocess
import sys
import time

from tests.helpers import ROOT, cpu_group

LOOP = "while True: pass"
# a SCHED_IDLE busy loop for 1.5 s of wall time; prints its cgroups, then the CPU it got
IDLE_LOOP = (
    "import os, time; os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0)); "
    "print(open('/proc/self/cgroup').read()); end = time.monotonic() + 1.5\n"
    "while time.monotonic() < end: pass\n"
    "print('cpu', time.process_time())"
)


def _helper(*args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "tests.helpers.cpu_group", *args]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=60)


def test_the_group_runs_ahead_of_busy_loops_or_says_why_not():
    reason = cpu_group.why_not()
    check = _helper("--check")
    if reason is not None:  # no group here: one line, and the check fails
        assert check.returncode == 1 and check.stdout.strip() == reason and "\n" not in reason
        assert "they run after the other tests" in reason
        return
    assert check.returncode == 0 and check.stdout == ""
    loops = [subprocess.Popen([sys.executable, "-c", LOOP]) for _ in range(2)]
    try:
        time.sleep(0.2)
        got = _helper("--", sys.executable, "-c", IDLE_LOOP)
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
    assert got.returncode == 0, got.stderr
    groups = dict(line.split(":", 2)[1:] for line in got.stdout.splitlines() if ":" in line)
    name = groups["cpu"].lstrip("/")
    assert name.startswith("attnviz-first-") and groups["cpuacct"] == groups["cpu"]
    # at SCHED_IDLE beside two busy loops on this machine's cores it would get next to
    # nothing; in the group it gets most of a core
    cpu_s = float(got.stdout.split("cpu")[-1])
    assert cpu_s >= 1.0, got.stdout
    assert not any((root / name).exists() for root in cpu_group.ROOTS)  # removed after


def test_the_command_s_exit_status_comes_back():
    if cpu_group.why_not() is not None:
        refused = _helper("--", sys.executable, "-c", "pass")  # cannot run it: one line
        assert refused.returncode == 1 and refused.stdout.startswith("cpu_group: "), refused
        return
    assert _helper("--", sys.executable, "-c", "raise SystemExit(3)").returncode == 3
    killed = _helper("--", sys.executable, "-c", "import os; os.kill(os.getpid(), 9)")
    assert killed.returncode == 128 + 9  # as a shell says it


def test_without_the_controller_one_line_says_why(tmp_path, monkeypatch):
    monkeypatch.setattr(cpu_group, "ROOTS", (tmp_path / "cpu", tmp_path / "cpuacct"))
    reason = cpu_group.why_not()
    assert reason is not None and "\n" not in reason
    assert f"{tmp_path / 'cpu'}: no cgroup v1 controller mounted there" in reason
    assert reason.endswith("they run after the other tests")
