"""A real ``streamlit run app.py`` server for the bench sections that drive live sessions.

Started as ``make run`` serves the app: its own process, ``MALLOC_ARENA_MAX=2``, the
repository's ``.streamlit/config.toml`` (headless, no file watcher), on a free loopback
port, serving the shipped models of a chosen folder (the app's ``$ATTNVIZ_MODELS_DIR``).
The server process is ``python -m streamlit`` itself (no shell in between), so its pid is
the one whose RSS and CPU time the bench reads.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil

from bench.apptest import MODELS_DIR_VARIABLE
from bench.common import EXPORTED

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
ARENA_MAX = "2"  # MALLOC_ARENA_MAX of the server process, as `make run` sets it
START_TIMEOUT_S = 90.0


@dataclass
class Server:
    """A running server: ``url`` (``http://127.0.0.1:<port>``) and its process."""

    url: str
    process: psutil.Process
    _log: object

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def ws_url(self) -> str:
        """The websocket every browser session talks to."""
        return self.url.replace("http://", "ws://", 1) + "/_stcore/stream"

    def rss_mb(self) -> float:
        """The server process's resident set size now, in MB (10**6 bytes)."""
        return self.process.memory_info().rss / 1e6

    def cpu_s(self) -> float:
        """CPU seconds (user + system) the server process has used so far."""
        t = self.process.cpu_times()
        return t.user + t.system

    def log(self) -> str:
        """What the server printed so far (stdout and stderr)."""
        self._log.seek(0)
        return self._log.read().decode(errors="replace")


def free_port() -> int:
    """A TCP port free on the loopback interface right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serve(
    app: Path = APP,
    folder: Path = EXPORTED,
    timeout_s: float = START_TIMEOUT_S,
    app_args: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
) -> Iterator[Server]:
    """Run ``streamlit run app`` until the block ends, the app serving the shipped models
    of ``folder`` (laid out like ``exported/``); yields a :class:`Server`. ``app_args``
    go to the app after ``--`` (``--model DIR``: a served model); ``env`` adds variables.

    Raises:
        RuntimeError: if the server does not answer ``/_stcore/health`` within
            ``timeout_s`` seconds (the message ends with the server's output).
    """
    port = free_port()
    env = (
        os.environ
        | (env or {})
        | {
            "MALLOC_ARENA_MAX": ARENA_MAX,
            "PYTHONPATH": str(ROOT),
            MODELS_DIR_VARIABLE: str(Path(folder).resolve()),
        }
    )
    log = tempfile.TemporaryFile()  # a pipe nobody reads could fill up and stall the server
    cmd = [sys.executable, "-m", "streamlit", "run", str(app)]
    cmd += ["--server.port", str(port), "--server.address", "127.0.0.1"]
    cmd += ["--server.headless", "true", "--browser.gatherUsageStats", "false"]
    cmd += ["--", *app_args] if app_args else []
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    server = Server(f"http://127.0.0.1:{port}", psutil.Process(proc.pid), log)
    try:
        _wait_healthy(server, proc, timeout_s)
        yield server
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def _wait_healthy(server: Server, proc: subprocess.Popen, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            with urllib.request.urlopen(server.url + "/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError("streamlit did not start: " + server.log()[-2000:])
