"""The worker's place in the scheduler: it must never take a CPU from the server, and a
worker kept waiting for one must not be blamed for it.

Real processes throughout: workers are started, competing busy loops run on the same
CPU, and the waiting time is the kernel's own count (``/proc/<pid>/schedstat``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.helpers import ROOT, hostile_gen
from upload.client import Worker
from upload.deadline import Deadline, run_queue_wait
from upload.errors import UploadError, WorkerError
from upload.limits import WAIT_FACTOR
from upload.load import load_upload

SCHED_IDLE = 5  # the policy number in /proc/<pid>/stat (linux/sched.h)
linux_only = pytest.mark.skipif(
    not Path("/proc/self/schedstat").exists(), reason="needs Linux's /proc/<pid>/schedstat"
)


@pytest.fixture
def idle_workers(monkeypatch):
    """Workers at SCHED_IDLE, as a server starts them (tests/conftest.py sets the tests'
    default to normal priority: on a host whose cores other jobs keep busy, an idle-class
    worker would wait for them all, so only the tests of that class use it)."""
    monkeypatch.setenv("ATTNVIZ_WORKER_PRIORITY", "idle")


def test_the_priority_setting_keeps_a_worker_at_normal_priority(monkeypatch):
    monkeypatch.setenv("ATTNVIZ_WORKER_PRIORITY", "normal")
    worker = Worker("w")
    try:
        _ping(worker)
        assert _policy(worker.proc.pid) != SCHED_IDLE
    finally:
        worker.stop()


def _policy(pid: int) -> int:
    """The scheduling policy of ``pid`` (field 41 of /proc/<pid>/stat)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2 :].split()[38])


def _ping(worker: Worker) -> None:
    """A request that needs no graph: the worker's own one-line refusal."""
    with pytest.raises(UploadError, match="no graph is open"):
        worker.request({"op": "ping"}, 60)


def _hogs(cpu: int, seconds: float, n: int = 4) -> list[subprocess.Popen]:
    """``n`` busy loops at normal priority on ``cpu``, in this session (as the server's
    threads are), each for ``seconds``."""
    code = (
        f"import os, time\nos.sched_setaffinity(0, {{{cpu}}})\n"
        f"end = time.monotonic() + {seconds}\nwhile time.monotonic() < end:\n    pass\n"
    )
    hogs = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(n)]
    time.sleep(0.5)  # all of them running
    return hogs


@linux_only
@pytest.mark.usefixtures("idle_workers")
def test_a_worker_runs_at_sched_idle_in_the_server_s_session():
    """SCHED_IDLE ranks the worker below the server's threads only within one session's
    autogroup, so the worker stays in the server's session (in a process group of its own:
    the terminal's Ctrl+C reaches only the server). The worker enters the class as its
    first act: the test waits for that, not for an answer, which on a machine whose cores
    other jobs keep busy an idle-class process gets only after them (40 s measured)."""
    worker = Worker("w")
    try:
        worker.start()
        pid, deadline = worker.proc.pid, time.monotonic() + 60
        while _policy(pid) != SCHED_IDLE and worker.alive and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _policy(pid) == SCHED_IDLE
        assert _policy(os.getpid()) != SCHED_IDLE  # the server's own class is untouched
        assert os.getsid(pid) == os.getsid(0)
        assert os.getpgid(pid) == pid != os.getpgid(0)
        autogroup = Path(f"/proc/{pid}/autogroup")
        if autogroup.exists():
            assert autogroup.read_text() == Path("/proc/self/autogroup").read_text()
    finally:
        worker.stop()


@linux_only
def test_the_command_line_s_worker_runs_at_normal_priority():
    """On its user's own computer the command line competes with their other work (a
    training run), not with a classroom: its worker keeps the normal class (SCHED_OTHER),
    where SCHED_IDLE would starve it."""
    worker = Worker("w", background=False)
    try:
        _ping(worker)
        assert _policy(worker.proc.pid) == 0  # SCHED_OTHER
        assert worker.place == "this computer"
    finally:
        worker.stop()


@pytest.mark.slow
@linux_only
def test_a_command_line_deadline_grows_by_the_time_its_worker_waits_for_a_cpu():
    """A process pinned to one CPU beside four busy loops gets about a fifth of it: after
    4 s it has used about 0.8 s of a 1 s budget and waited about 3 s. The server's cap
    (WAIT_FACTOR x 1 s on the wall clock) has passed; the command line's has not, since
    every second it waited for a CPU is added to it."""
    loop = "while True:\n    pass\n"
    proc = subprocess.Popen([sys.executable, "-c", loop])
    try:
        cpu = min(os.sched_getaffinity(proc.pid))
        os.sched_setaffinity(proc.pid, {cpu})
        hogs = _hogs(cpu, 4.0 + WAIT_FACTOR)
        fixed, follows = Deadline(proc.pid, 1.0), Deadline(proc.pid, 1.0, follow_waits=True)
        while time.monotonic() < fixed.start + WAIT_FACTOR + 1.0:
            time.sleep(0.1)
        now, moved = time.monotonic(), follows()
        assert fixed() == pytest.approx(fixed.start + WAIT_FACTOR, abs=1e-6)
        assert fixed() < now  # the server's worker would be stopped as "too busy"
        # Five runnable processes pinned to one CPU: the kernel kept it waiting (a skip
        # here hid the case where it did not; tests/helpers/skips.py).
        assert run_queue_wait(proc.pid) is not None, "no run-queue wait in schedstat"
        assert follows.used_s < 1.0, f"the pinned process ran {follows.used_s:.2f} s of 4"
        assert moved > now
        assert follows.waited_s > 1.0
        assert not follows.busy
        for hog in hogs:
            hog.kill()
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.slow
@linux_only
def test_a_worker_kept_waiting_for_a_cpu_is_not_timed_out_until_the_cap(exported_dir):
    """A request's budget (3 s here) is the worker's CPU time: time the worker does not
    run does not count, up to WAIT_FACTOR times the budget on the wall clock; past that
    cap a worker still waiting for a CPU is stopped as "too busy".

    The worker opens its graph at the tests' normal priority (on a host other jobs keep
    busy, an idle-class worker would wait for them all). The first request's wait is a
    SIGSTOP of 4.5 s (the deadline reads only the CPU the worker used, so a stopped worker
    and one kept off the CPU count alike, whatever else the host runs); the second is a
    real wait: the worker put in SCHED_IDLE, pinned to one CPU beside four busy loops."""
    files = {"linear.inspect.onnx": (exported_dir / "linear.inspect.onnx").read_bytes()}
    model = load_upload(files)
    worker, ids = model._worker, list(range(1, 65))  # T = 64: about 9 ms of CPU
    expect = lambda reply: lambda name, shape: True  # noqa: E731
    try:
        model.inspect(ids)
        pid = worker.proc.pid
        os.kill(pid, signal.SIGSTOP)
        resume = threading.Timer(4.5, os.kill, (pid, signal.SIGCONT))
        resume.start()
        start = time.monotonic()
        _, out = worker.request({"op": "inspect", "ids": ids}, 3.0, expect=expect)
        took = time.monotonic() - start
        resume.join()
        assert out["attn"].shape[-1] == 64
        assert took > 4.0  # longer than its budget on the wall clock (stopped for 4.5 s)
        assert worker.proc.pid == pid  # and not stopped

        cpu = min(os.sched_getaffinity(pid))
        for task in os.listdir(f"/proc/{pid}/task"):  # every thread: onnxruntime's too
            os.sched_setscheduler(int(task), os.SCHED_IDLE, os.sched_param(0))
            os.sched_setaffinity(int(task), {cpu})
        assert _policy(pid) == SCHED_IDLE
        hogs = _hogs(cpu, 4.0)
        start = time.monotonic()
        with pytest.raises(WorkerError) as info:
            worker.request({"op": "inspect", "ids": ids}, 0.5, expect=expect)
        took = time.monotonic() - start
        for hog in hogs:
            hog.wait()
        assert str(info.value) == (
            "linear.inspect.onnx: stopped: the server was too busy to give it 0.5 s of CPU "
            f"time within {WAIT_FACTOR * 0.5:g} s; try again later"
        )
        assert WAIT_FACTOR * 0.5 <= took < WAIT_FACTOR * 0.5 + 1
        assert worker.proc is None  # stopped; the next analysis starts a fresh worker
        assert model.inspect(ids)["attn"].shape[-1] == 64
    finally:
        model.close()


def test_a_worker_imports_torch_only_to_read_a_checkpoint(tmp_path, exported_dir):
    """torch costs a worker 2 CPU-seconds to import: a worker for ONNX graphs, or for a
    checkpoint refused before its tensors are read, never imports it."""
    files = {"linear.inspect.onnx": (exported_dir / "linear.inspect.onnx").read_bytes()}
    model = load_upload(files)
    try:
        model.inspect([1, 2, 3])
        maps = Path(f"/proc/{model._worker.proc.pid}/maps")
        if maps.exists():
            assert "onnxruntime" in maps.read_text()
            assert "libtorch" not in maps.read_text()
    finally:
        model.close()
    uploads = [
        hostile_gen.safetensors_config_not_object(),  # refused after its header is read
        hostile_gen.tokenizer_huge_padding(),  # refused at its tokenizer
        {"ckpt.pt": b"PK\x03\x04", "meta.pkl": b"\x80\x02."},  # the meta.pkl is read first
    ]
    for i, upload in enumerate(uploads):
        for name, data in upload.items():
            (tmp_path / str(i)).mkdir(exist_ok=True)
            (tmp_path / str(i) / name).write_bytes(data)
    code = f"""
import sys
from pathlib import Path
sys.path[0] = {str(ROOT)!r}
from upload import handlers
for folder in sorted(Path({str(tmp_path)!r}).iterdir()):
    try:
        handlers.convert({{p.name: p.read_bytes() for p in folder.iterdir()}})
    except Exception as exc:
        print(type(exc).__name__, str(exc)[:80])
print("torch" in sys.modules, "onnxruntime" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True,
                         timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 4 and all(line.startswith("UploadError") for line in lines[:3]), lines
    assert lines[-1] == "False False", out.stdout
