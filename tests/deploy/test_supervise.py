"""deploy/supervise.py: a child that exits is started again after a growing back-off,
with one line each time; nothing is restarted once the supervisor is closed."""

from __future__ import annotations

import subprocess
import sys
import time

from deploy.supervise import BACKOFF_S, Child, Supervisor, backoff_s


def test_the_back_off_doubles_to_a_minute():
    assert [backoff_s(k) for k in range(8)] == [1, 2, 4, 8, 16, 32, 60, 60]
    assert BACKOFF_S[-1] == 60


def test_a_child_that_exits_is_restarted_after_its_back_off_and_logged_in_one_line():
    starts: list[float] = []

    def start() -> subprocess.Popen:
        starts.append(time.monotonic())
        return subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])

    child = Child("replica r9", start)
    child.proc, child.started = start(), time.monotonic()
    lines: list[str] = []
    supervisor = Supervisor([child], lines.append).start()
    deadline = time.monotonic() + 30
    while len(lines) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    supervisor.close()  # during the second back-off (2 s)
    assert len(starts) == 2, lines
    assert 1.0 <= starts[1] - starts[0] < 3.0, starts  # 1 s, plus the child's own run
    assert lines[0].startswith("replica r9 (pid ") and "exited with code 3" in lines[0]
    assert "restarting it in 1 s (restart 1)" in lines[0]
    assert "restarting it in 2 s (restart 2)" in lines[1]
    assert all("\n" not in line for line in lines)
    child.proc.wait(timeout=10)
    assert not supervisor._thread.is_alive()  # closed: nothing watches, nothing restarts
