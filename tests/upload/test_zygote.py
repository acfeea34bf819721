"""The upload workers' zygote (``upload/zygote.py``): the workers of conversions and exports
are forked from one process that imported torch, and are fenced in as a fresh worker is.

Real processes throughout: the zygote, its forked workers, their /proc entries.
"""

from __future__ import annotations

import logging
import os
import signal
from pathlib import Path

import pytest

from upload import zygote
from upload.client import Worker
from upload.deadline import process_state
from upload.errors import UploadError
from upload.limits import WORKER_MEMORY_BYTES

SCHED_IDLE = 5  # the policy number in /proc/<pid>/stat (linux/sched.h)
pytestmark = pytest.mark.skipif(
    not hasattr(os, "pidfd_open"), reason="needs Linux's pidfd (the zygote is not used)"
)


def _stat(pid: int) -> list[str]:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rindex(")") + 2 :].split()


def _ping(worker: Worker) -> None:
    with pytest.raises(UploadError, match="no graph is open"):
        worker.request({"op": "ping"}, 60)


def _fork(worker: Worker) -> int:
    """Start ``worker`` for an export (forked) and have it answer once: its pid."""
    worker.stop()
    worker.start("export", 60)
    _ping(worker)
    return worker.proc.pid


def _limit(pid: int, name: str) -> str:
    line = next(x for x in Path(f"/proc/{pid}/limits").read_text().splitlines() if name in x)
    return line.split()[-3]  # the soft limit


def test_an_export_worker_is_forked_by_the_zygote_and_fenced_in_like_a_fresh_one(monkeypatch):
    """The worker is the zygote's child, in a process group of its own in our session, at
    SCHED_IDLE (the environment of the request, not the zygote's), with the address-space
    limit; torch is in its memory without its CPU time: the import was the zygote's."""
    monkeypatch.setenv("ATTNVIZ_WORKER_PRIORITY", "idle")
    worker = Worker("w")
    try:
        worker.start("export", 60)
        assert isinstance(worker.proc, zygote.Forked)
        _ping(worker)  # answered: serve() set its class and limits before reading it
        pid = worker.proc.pid
        assert int(_stat(pid)[1]) == zygote.zygote_pid() != os.getpid()  # its parent
        assert os.getsid(pid) == os.getsid(0)
        assert os.getpgid(pid) == pid != os.getpgid(0)
        assert int(_stat(pid)[38]) == SCHED_IDLE
        assert int(_stat(zygote.zygote_pid())[38]) != SCHED_IDLE
        assert _limit(pid, "Max address space") == str(WORKER_MEMORY_BYTES)
        assert "libtorch" in Path(f"/proc/{pid}/maps").read_text()
        assert process_state(pid)[1] < 0.5  # importing torch alone takes 1.2 s or more
        worker.proc.kill()
        assert worker.proc.wait(10) == -signal.SIGKILL
    finally:
        worker.stop()


def test_the_zygote_is_one_thread_without_onnxruntime():
    """Forking is safe only from a process with one thread: onnxruntime starts one when
    imported, so the zygote never imports it (workers for ONNX graphs start fresh)."""
    worker = Worker("w", background=False)
    try:
        worker.start("convert", 60)
        _ping(worker)
        pid = zygote.zygote_pid()
        assert os.listdir(f"/proc/{pid}/task") == [str(pid)]
        maps = Path(f"/proc/{pid}/maps").read_text()
        assert "libtorch" in maps and "onnxruntime" not in maps
        worker.stop()
        worker.start("open", 60)  # an ONNX graph's worker: a process of its own
        assert not isinstance(worker.proc, zygote.Forked)
        assert int(_stat(worker.proc.pid)[1]) == os.getpid()
    finally:
        worker.stop()


def test_a_crashed_worker_reports_its_signal_and_is_replaced():
    worker = Worker("w", background=False)
    try:
        first = _fork(worker)
        os.kill(first, signal.SIGSEGV)
        assert worker.proc.wait(10) == -signal.SIGSEGV
        assert not worker.alive
        assert _fork(worker) != first
    finally:
        worker.stop()


def test_a_killed_zygote_is_started_again():
    worker = Worker("w", background=False)
    try:
        _fork(worker)
        old = zygote.zygote_pid()
        worker.stop()
        os.kill(old, signal.SIGKILL)
        _fork(worker)
        assert isinstance(worker.proc, zygote.Forked)
        assert zygote.zygote_pid() not in (None, old)
    finally:
        worker.stop()


def test_a_zygote_that_cannot_start_leaves_each_worker_to_start_on_its_own(
    monkeypatch, tmp_path, caplog
):
    """A zygote that exits before it is ready (here: a script that refuses) is said once
    in the server's log; the worker, and each one after it, starts as a fresh process."""
    script = tmp_path / "zygote.py"
    script.write_text("raise SystemExit('no torch here')\n")
    monkeypatch.setattr(zygote, "ZYGOTE", script)
    monkeypatch.setattr(zygote, "_ZYGOTE", None)
    monkeypatch.setattr(zygote, "_BROKEN", [])
    worker = Worker("w", background=False)
    try:
        with caplog.at_level(logging.WARNING, logger="attnviz.upload"):
            worker.start("export", 60)
            _ping(worker)
            assert not isinstance(worker.proc, zygote.Forked)
            worker.stop()
            worker.start("export", 60)
            assert not isinstance(worker.proc, zygote.Forked)
        said = [r.getMessage() for r in caplog.records if "zygote" in r.getMessage()]
        assert said == ["upload workers start without a zygote: it exited (no torch here)"]
    finally:
        worker.stop()
