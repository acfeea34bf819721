"""The upload workers' zygote: one process that has imported torch and forks the workers
that need it, so that each starts with torch already in memory.

The worker of an upload's conversion or of an export (``FORKED_OPS``) imports torch, onnx
and our model code: about 1.3 CPU-seconds on the 2-core CI machine, most of such a
worker's CPU. A server (or the command line, for its export) starts one zygote,
``python -I upload/zygote_main.py``, on the first such request; it imports them once and
then, for each worker, forks a child that runs ``upload.worker.serve`` exactly as
``python -I upload/worker.py`` would: its own process group in the server's session, the
request's environment, SCHED_IDLE and the ``resource`` limits set by ``serve`` before it
reads a byte of the request. The child's CPU time starts at zero, so a request's CPU
budget counts only its own work.

The zygote itself never sees a user's byte: it reads only the server's fork requests on a
private socket pair. It stays single-threaded (fork-safe): it does not import
onnxruntime, which starts a thread on import; workers for ONNX graphs are started as
before. Each worker is the zygote's child, so the zygote reaps it and writes its exit
status (``Popen``'s convention: ``-signal`` when killed) into a pipe the server holds; the
server kills a worker through a pidfd (Linux >= 5.3), which cannot reach a reused pid. The
zygote exits when its server does (the socket closes) or after ``IDLE_S`` without a
worker. Where any of this is missing (no pidfd, the zygote failed to start), the worker
is started as a fresh process instead.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

# The server's requests whose worker imports torch (``upload/worker.py``): an upload's
# conversion and the export. The command line's conversions (``convert_local``,
# ``convert_folder``: one per process) start fresh: their reply says how much memory
# reading the files took, and a forked worker would count the torch library's pages it
# touches for the first time (shared with the zygote) as part of the reading.
FORKED_OPS = frozenset({"convert", "export"})
# imported once by the zygote: what those requests import, onnxruntime excepted
PRELOAD = (
    "numpy",
    "torch",
    "onnx",
    "safetensors.numpy",
    "models.checkpoint",
    "models.shapes",
    "upload.worker",
    "upload.handlers",
    "upload.local_handlers",
    "upload.export_handler",
    "upload.formats.hf_gpt2",
    "export.graphs",
)
IDLE_S = 600.0  # the zygote exits after this long without a worker (started again on use)
LOST = 255  # a worker's exit status when the zygote that would have reported it is gone
MESSAGE_BYTES = 2**20  # a fork request: the worker's arguments and environment
STATUS = struct.Struct("i")
ZYGOTE = Path(__file__).with_name("zygote_main.py")  # the zygote process's own code


class Forked:
    """A worker forked by the zygote, with the part of ``subprocess.Popen`` the server
    uses: ``pid``, ``stdin``, ``stdout``, ``poll()``, ``wait(timeout)``, ``kill()`` and
    ``returncode`` (set once the zygote has reaped it)."""

    def __init__(self, pid: int, pidfd: int, status_fd: int, stdin_fd: int, stdout_fd: int):
        self.pid, self.returncode = pid, None
        self._pidfd, self._status = pidfd, status_fd
        self.stdin, self.stdout = open(stdin_fd, "wb"), open(stdout_fd, "rb")

    def poll(self) -> int | None:
        if self.returncode is None and self._status is not None:
            if select.select([self._status], [], [], 0)[0]:
                data = os.read(self._status, STATUS.size)
                os.close(self._status)
                self._status = None
                if len(data) == STATUS.size:
                    self._done(STATUS.unpack(data)[0])
        if self.returncode is None and self._status is None:  # the zygote is gone
            if select.select([self._pidfd], [], [], 0)[0]:  # readable: the worker exited
                self._done(LOST)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        end = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            left = None if end is None else end - time.monotonic()
            if left is not None and left <= 0:
                raise subprocess.TimeoutExpired(f"upload worker {self.pid}", timeout)
            select.select([self._status if self._status is not None else self._pidfd], [], [], left)
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)

    def _done(self, code: int) -> None:
        self.returncode = code
        os.close(self._pidfd)

    def __del__(self):
        for fd in (self._status, None if self.returncode is not None else self._pidfd):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)


class _Zygote:
    """The server's end of one zygote process (thread-safe)."""

    def __init__(self, env: dict[str, str]):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, "-I", str(ZYGOTE), str(theirs.fileno())],
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._log,
            env=env,
            cwd=tempfile.gettempdir(),
            process_group=0,
        )
        theirs.close()
        self.sock, self.ready, self._lock = ours, False, threading.Lock()

    def fork(self, args: list[str], env: Mapping[str, str], stderr_fd: int, wait_s: float):
        """A :class:`Forked` worker running ``serve(*args)``, or None where the zygote did
        not answer within ``wait_s`` (it is then stopped)."""
        end = time.monotonic() + wait_s
        if not self._lock.acquire(timeout=wait_s):
            return None
        try:
            if not self.ready and not self._answer(end):
                return None
            stdin_r, stdin_w = os.pipe()
            stdout_r, stdout_w = os.pipe()
            status_r, status_w = os.pipe()
            ask = json.dumps({"args": args, "env": dict(env), "cwd": tempfile.gettempdir()})
            try:
                socket.send_fds(self.sock, [ask.encode()], [stdin_r, stdout_w, stderr_fd, status_w])
                reply = self._answer(end)
            except OSError:  # the zygote is gone
                self.stop()
                reply = None
            finally:
                for fd in (stdin_r, stdout_w, status_w):
                    os.close(fd)
            if not reply or "pid" not in reply:
                for fd in (stdin_w, stdout_r, status_r):
                    os.close(fd)
                return None
            return Forked(reply["pid"], reply["fds"][0], status_r, stdin_w, stdout_r)
        finally:
            self._lock.release()

    def _answer(self, end: float) -> dict | None:
        """The zygote's next message (its readiness, or a fork's pid and pidfd), or None
        when it ended or did not answer by ``end`` (then it is stopped)."""
        while not select.select([self.sock], [], [], max(0.0, end - time.monotonic()))[0]:
            if time.monotonic() >= end:
                self.stop()
                return None
        try:
            data, fds, _, _ = socket.recv_fds(self.sock, 4096, 1)
            reply = json.loads(data) if data else None
        except (OSError, ValueError):
            reply, fds = None, []
        if not reply:
            self.stop()
            return None
        self.ready = True
        return {**reply, "fds": fds}

    def failed(self) -> str:
        """What the zygote wrote to stderr (its last 2,000 characters)."""
        self._log.seek(0, 2)
        self._log.seek(max(0, self._log.tell() - 2000))
        return self._log.read().decode(errors="replace")

    def stop(self) -> None:
        self.ready = False
        self.sock.close()
        if self.proc.poll() is None:
            self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=1)

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None and self.sock.fileno() >= 0


_ZYGOTE: _Zygote | None = None
_STARTING = threading.Lock()
_BROKEN: list[str] = []  # why this process's zygote could not start (then none is tried)


def fork_worker(
    args: list[str], env: dict[str, str], stderr_fd: int, wait_s: float, log: Callable[[str], None]
) -> Forked | None:
    """A worker (``upload.worker.serve(*args)`` in ``env``, stderr to ``stderr_fd``) forked
    by this process's zygote, started here on first use; None where there is none (no
    pidfd here, or it failed: ``log`` is told why once) or it did not answer within
    ``wait_s`` seconds: the caller then starts the worker as a process of its own."""
    global _ZYGOTE
    if _BROKEN or not hasattr(os, "pidfd_open") or not hasattr(socket, "send_fds"):
        return None
    for _ in range(2):  # a zygote found dead on use (killed) is started again, once
        with _STARTING:
            if _ZYGOTE is None or not _ZYGOTE.alive:
                _ZYGOTE = _Zygote(env)
            zygote, was_ready = _ZYGOTE, _ZYGOTE.ready
        forked = zygote.fork(args, env, stderr_fd, wait_s)
        if forked is not None or not was_ready or zygote.alive:
            break
    code = zygote.proc.poll()
    if forked is None and not zygote.ready and code is not None and code != -signal.SIGKILL:
        said = zygote.failed().strip().splitlines() or [f"exit status {code}"]
        _BROKEN.append(said[-1][:300])  # it could not preload: it would fail again
        log(f"upload workers start without a zygote: it exited ({_BROKEN[0]})")
    return forked


def zygote_pid() -> int | None:
    """The pid of this process's zygote while it runs (for tests and the bench)."""
    return _ZYGOTE.proc.pid if _ZYGOTE is not None and _ZYGOTE.alive else None


@atexit.register
def _stop_zygote() -> None:
    if _ZYGOTE is not None:
        _ZYGOTE.stop()
