"""``make test``'s CPU groups for the timed suites (``tests/helpers/cpu_group.py``): where
they can be made, a SCHED_IDLE process of the ``ahead`` command gets a core beside two
busy loops of the ``behind`` command, ``behind`` stops being idle when ``ahead`` ends,
and the groups are gone after; where they cannot, one line says why and ``make test``
runs the suites after the others."""

from __future__ import annotations

import subprocess
import sys

from tests.helpers import ROOT, cpu_group

PY = sys.executable
# a SCHED_IDLE busy loop for 1.5 s of wall time; prints its cgroups, then the CPU it got
IDLE_LOOP = (
    "import os, time; os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0)); "
    "print(open('/proc/self/cgroup').read()); end = time.monotonic() + 1.5\n"
    "while time.monotonic() < end: pass\n"
    "print('cpu', time.process_time())"
)
BUSY = "import time; end = time.monotonic() + 2.0\nwhile time.monotonic() < end: pass"
# after ``ahead`` ended: behind's own cpu.idle
IDLE_FLAG = (
    "import time; time.sleep(3); path = [l for l in open('/proc/self/cgroup') "
    "if ':cpu:' in l][0].split(':')[2].strip(); "
    "print('idle', open(f'/sys/fs/cgroup/cpu{path}/cpu.idle').read().strip())"
)


def _helper(*args: str) -> subprocess.CompletedProcess:
    cmd = [PY, "-m", "tests.helpers.cpu_group", *args]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=60)


def test_the_first_command_runs_ahead_of_the_second_or_one_line_says_why_not():
    reason = cpu_group.why_not()
    check = _helper("--check")
    if reason is not None:  # no groups here: one line, and the check fails
        assert check.returncode == 1 and check.stdout.strip() == reason and "\n" not in reason
        assert "they run after the other tests" in reason
        return
    assert check.returncode == 0 and check.stdout == ""
    behind = f"{PY} -c '{BUSY}' & {PY} -c '{BUSY}' & {PY} -c \"{IDLE_FLAG}\"; wait"
    got = _helper("--ahead", f'{PY} -c "{IDLE_LOOP}"', "--behind", behind)
    assert got.returncode == 0, got.stderr
    groups = dict(line.split(":", 2)[1:] for line in got.stdout.splitlines() if ":" in line)
    name = groups["cpu"].strip("/")
    assert name.startswith("attnviz-tests-") and name.endswith("/ahead"), groups
    assert groups["cpuacct"] == groups["cpu"]
    # at SCHED_IDLE beside two busy loops on this machine's two cores it would get next to
    # nothing; ahead of them it gets a core (1.48 s of 1.5 s quiet; at least a third of it
    # while other tests, or another job, keep the cores busy)
    cpu_s = float(got.stdout.split("cpu ")[-1].split()[0])
    assert cpu_s >= 0.5, got.stdout
    assert "idle 0" in got.stdout  # behind, once ahead had ended
    counted = got.stdout.rsplit("cpu_group: CPU time used: ", 1)[1].strip()
    ahead_s, behind_s = (float(part.split()[1].replace(",", "")) for part in counted.split(", "))
    assert ahead_s >= 0.5 and behind_s >= 1.0, counted  # two busy loops of 2 s behind
    parent = name.split("/")[0]
    assert not any((root / parent).exists() for root in cpu_group.ROOTS)  # removed after


def test_the_exit_status_is_the_first_nonzero_one():
    if cpu_group.why_not() is not None:
        refused = _helper("--ahead", "true", "--behind", "true")  # cannot run: one line
        assert refused.returncode == 1 and refused.stdout.startswith("cpu_group: "), refused
        return
    assert _helper("--ahead", "true", "--behind", "true").returncode == 0
    assert _helper("--ahead", "exit 3", "--behind", "true").returncode == 3
    assert _helper("--ahead", "true", "--behind", "exit 4").returncode == 4
    assert _helper("--ahead", "true", "--behind", "kill -9 $$").returncode == 128 + 9


def test_without_the_controller_one_line_says_why(tmp_path, monkeypatch):
    monkeypatch.setattr(cpu_group, "ROOTS", (tmp_path / "cpu", tmp_path / "cpuacct"))
    reason = cpu_group.why_not()
    assert reason is not None and "\n" not in reason
    assert f"{tmp_path / 'cpu'}: no cgroup v1 controller mounted there" in reason
    assert reason.endswith("they run after the other tests")
