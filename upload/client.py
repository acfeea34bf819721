"""Server side of the upload worker: start it, send it a request, read a checked answer.

A :class:`Worker` is one child process (``upload/worker.py``), started in the server's
own session so that its scheduling class (SCHED_IDLE) ranks it below the server's threads.
Each request has a budget of seconds of the worker's CPU time, and at most WAIT_FACTOR
times that on the wall clock: time the worker spends waiting for a CPU that the server
uses is not held against it. Past either, or when the worker dies or answers out of
protocol, the worker is killed and :class:`~upload.errors.WorkerError` says in one line
what happened. The command line's worker (``background=False``: a user's own computer,
where other work may hold every CPU) runs at normal priority instead, and its wall clock
grows by every second it waits for a CPU: a busy computer makes it slower, never refused.
Nothing the worker says is trusted: the reply header is bounded JSON and every array's
name and shape is checked against what the caller expects before it is read.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path

import numpy as np

from upload import protocol
from upload.budget import WorkerBudget
from upload.deadline import Deadline
from upload.errors import UploadError, WorkerError, shown
from upload.limits import (
    MAX_HEADER_BYTES,
    MAX_REPLY_BYTES,
    WAIT_FACTOR,
    WORKER_IDLE_S,
    WORKER_MEMORY_BYTES,
)
from upload.zygote import FORKED_OPS, Forked, fork_worker

WORKER = Path(__file__).with_name("worker.py")
# A library's refusal text (onnxruntime's, with its source paths) goes here: the server's
# log (stderr, where Python's last-resort handler writes a warning), never the page.
_LOG = logging.getLogger("attnviz.upload")
_LIVE: weakref.WeakSet = weakref.WeakSet()
# Set by the server (ui.loaders): who is asking now (a session id), recorded as a server
# worker's owner so that :func:`reap` can stop the workers of closed sessions.
caller: Callable[[], object] = lambda: None  # noqa: E731


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MALLOC_ARENA_MAX="2")
    return env


class Worker:
    """One upload worker process; thread-safe (one request at a time).

    Args:
        what: how messages name the upload ("ckpt.pt", "the uploaded graphs").
        memory_bytes: the worker's address-space limit.
        idle_s: the worker exits after this long without a request.
        file_bytes: the largest file it may write (its stderr log; the exporter's graphs).
        reply_bytes: the most one reply's arrays may hold (the command line's converter
            of a large local checkpoint: its weights).
        budget: the server's :class:`~upload.budget.WorkerBudget` each request waits its
            turn in (None: none, as on the command line).
        on_wait: called with the request's place in line while it waits.
        background: True (the app's server): the worker runs at SCHED_IDLE, below the
            classroom's requests, and its wall clock is capped at WAIT_FACTOR times each
            request's CPU budget. False (the command line on its user's own computer):
            normal priority, the cap grows by the time it waits for a CPU
            (:class:`Deadline` ``follow_waits``), and messages speak of "this computer".
    """

    def __init__(
        self,
        what: str,
        memory_bytes: int = WORKER_MEMORY_BYTES,
        idle_s: float = WORKER_IDLE_S,
        file_bytes: int = 2**20,
        reply_bytes: int = MAX_REPLY_BYTES,
        budget: WorkerBudget | None = None,
        on_wait: Callable[[int], None] | None = None,
        background: bool = True,
    ):
        self.what, self.memory_bytes, self.idle_s = what, memory_bytes, idle_s
        self.file_bytes, self.reply_bytes = file_bytes, reply_bytes
        self.budget, self.on_wait = budget, on_wait
        self.owner = caller() if budget is not None else None  # a server worker's session
        self.background = background
        self.place = "the server" if background else "this computer"
        self.proc: subprocess.Popen | Forked | None = None
        self._lock = threading.Lock()
        self._stderr = None
        _LIVE.add(self)

    def start(self, op: str | None = None, wait_s: float = 60.0) -> None:
        """Start the process (0.35 s to its first answer on the 2-core CI machine, see
        the bench; the worker imports torch or onnxruntime only for requests that need them).
        A worker for ``op`` in ``upload.zygote.FORKED_OPS`` (an upload's conversion, an export) is
        forked by this process's zygote, which has imported torch already; the zygote is
        waited for at most ``wait_s`` seconds, else the worker starts as a process of its own.

        It stays in the server's session (its own process group, so the terminal's
        Ctrl+C reaches only the server): scheduling classes and nice values rank
        processes within one session's autogroup, so a worker in a session of its own
        would get as much CPU as the whole server.
        """
        self._stderr = tempfile.TemporaryFile()
        limits = (self.memory_bytes, self.idle_s, self.file_bytes)
        args = [*map(str, limits), "idle" if self.background else "normal"]
        forked = None
        if op in FORKED_OPS:
            forked = fork_worker(args, _env(), self._stderr.fileno(), wait_s, _LOG.warning)
        self.proc = forked or subprocess.Popen(
            [sys.executable, "-I", str(WORKER), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=_env(),
            cwd=tempfile.gettempdir(),
            process_group=0,
        )
        os.set_blocking(self.proc.stdin.fileno(), False)  # requests are written with a deadline

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        """Kill the process (if running) and forget it; the next request starts a new one.

        A killed SCHED_IDLE worker needs a free CPU to exit, so on a busy server it is
        reaped by a thread of its own: the caller (through garbage collection maybe
        another student's session) never waits for it.
        """
        proc, self.proc = self.proc, None
        if proc is not None:
            if proc.poll() is None:
                proc.kill()
            try:
                proc.wait(timeout=0.1)
            except subprocess.TimeoutExpired:
                threading.Thread(target=proc.wait, name="reap-upload-worker", daemon=True).start()
            for stream in (proc.stdin, proc.stdout):
                stream.close()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def stderr_tail(self, limit: int = 4000) -> str:
        """The last ``limit`` characters the worker wrote to stderr (for ``--debug``)."""
        if self._stderr is None:
            return ""
        self._stderr.seek(0, 2)
        size = self._stderr.tell()
        self._stderr.seek(max(0, size - limit))
        return self._stderr.read().decode(errors="replace")

    def request(
        self,
        header: dict,
        timeout_s: float,
        arrays: dict[str, np.ndarray] | None = None,
        blobs: dict[str, bytes] | None = None,
        expect: Callable[[dict], Callable[[str, tuple], bool]] | None = None,
    ) -> tuple[dict, dict[str, np.ndarray]]:
        """Send one request and read its checked reply: (header, arrays).

        Args:
            header: the request; ``op`` names it.
            timeout_s: the answer's budget: seconds of the worker's CPU time (see
                :class:`Deadline`; also its RLIMIT_CPU for this request).
            expect: given the reply header, a function (name, declared shape) -> whether
                that array is accepted (see ``protocol.read_payload``). Default: the
                reply may carry no arrays.

        Raises:
            UploadError: the worker's own one-line refusal.
            WorkerError: it died, timed out, or broke the protocol (it is then stopped).
        """
        with self._lock, self._admitted():
            if not self.alive:
                self.stop()
                self.start(header.get("op"), WAIT_FACTOR * timeout_s)
            deadline = Deadline(self.proc.pid, timeout_s, follow_waits=not self.background)
            out: dict[str, np.ndarray] = {}
            try:
                request = {**header, "cpu_s": timeout_s}
                protocol.write(self.proc.stdin.fileno(), request, arrays, blobs, deadline)
                fd = self.proc.stdout.fileno()
                reply = protocol.read_header(fd, deadline, MAX_HEADER_BYTES)
                if reply.get("ok"):
                    check = expect(reply) if expect is not None else (lambda name, shape: False)
                    out = protocol.read_payload(fd, reply, deadline, self.reply_bytes, check)[0]
            except WorkerError as exc:
                raise self._failure(exc, deadline) from None
            except OSError as exc:  # a broken pipe: the worker is gone
                raise self._failure(WorkerError(str(exc)), deadline) from None
            except BaseException:  # the caller refused the reply: the protocol is out of step
                self.stop()
                raise
            if header.get("op") in ("convert", "convert_local", "convert_folder", "fold_onnx"):
                self.stop()  # a convert worker exits after its one answer
            if not reply.get("ok"):
                line = str(reply.get("error", "refused"))[:600]
                if reply.get("detail"):  # a library's own text: the server's log, not the page
                    _LOG.warning("%s | the library said: %s", line, shown(reply["detail"]))
                raise UploadError(line)
            return reply, out

    def _admitted(self):
        """The request's turn in the server's budget (nothing to wait for without one)."""
        if self.budget is None:
            return contextlib.nullcontext()
        return self.budget.admit(self.memory_bytes, self.what, self.on_wait)

    def _failure(self, exc: WorkerError, deadline: Deadline) -> WorkerError:
        """Stop the worker and say in one line what became of it."""
        proc, timeout_s = self.proc, deadline.budget_s
        busy = str(exc) == "timeout" and deadline.busy  # read before the worker is killed
        if proc is not None and proc.poll() is None and str(exc) != "timeout":
            time.sleep(0.05)  # a worker that just closed its pipe is usually exiting
        code = proc.poll() if proc is not None else None
        self.stop()
        if busy:
            return WorkerError(
                f"{self.what}: stopped: {self.place} was too busy to give it {timeout_s:g} s "
                f"of CPU time within {WAIT_FACTOR * timeout_s:g} s; try again later"
            )
        if str(exc) == "timeout" and deadline.used_s < timeout_s:  # it stopped computing
            waited = deadline.waited_s
            waited = f" (and {waited:.0f} s waiting for a CPU)" if waited >= 1 else ""
            return WorkerError(
                f"{self.what}: stopped: no answer within {WAIT_FACTOR * timeout_s:g} s{waited}"
            )
        if str(exc) == "timeout":
            return WorkerError(f"{self.what}: stopped: it took longer than {timeout_s:g} s")
        if code is not None and code < 0:
            sig = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else code
            why = {
                "SIGSEGV": "the reader crashed on it (a structure nested too deeply?)",
                "SIGXCPU": f"it needed more than {timeout_s:g} s of CPU time",
                "SIGKILL": f"it needed more than {timeout_s:g} s of CPU time or too much memory",
                "SIGABRT": "the reader aborted on it (out of memory?)",
            }.get(sig, f"the worker ended with {sig}")
            return WorkerError(f"{self.what}: stopped: {why}")
        if str(exc).startswith("protocol"):
            return WorkerError(f"{self.what}: stopped: the worker broke the protocol ({exc})")
        return WorkerError(f"{self.what}: stopped: the worker ended unexpectedly (code {code})")


def reap(owner_alive: Callable[[object], bool] | None = None) -> int:
    """Stop, and collect the exit status of (no zombie left), every worker that exited on
    its own (idle, or killed), and every idle worker whose owner ``owner_alive`` says is
    gone (a closed tab's). A worker busy with a request is left alone. Returns how many
    were stopped; the next request of a model whose worker was stopped starts a new one."""
    stopped = 0
    for worker in list(_LIVE):
        proc = worker.proc
        if proc is None:
            continue
        exited = proc.poll() is not None
        orphan = owner_alive is not None and worker.owner is not None
        orphan = orphan and not owner_alive(worker.owner)
        if (exited or orphan) and worker._lock.acquire(blocking=False):
            try:
                worker.stop()
                stopped += 1
            finally:
                worker._lock.release()
    return stopped


@atexit.register
def _stop_all() -> None:
    for worker in list(_LIVE):
        worker.stop()
