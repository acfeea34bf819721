"""Start ``streamlit run app.py`` as ``make run`` serves it, on a free loopback port.

The one launcher of the project's servers: the browser tests' shared server, the bench's
live sections and ``make serve-replicas`` (``deploy/replicas.py``) all start theirs here.
The server is its own process, ``python -m streamlit`` itself (no shell in between, so
its pid is the one whose RSS and CPU time the bench reads), with ``MALLOC_ARENA_MAX=2``
and the repository's ``.streamlit/config.toml`` (headless, no file watcher).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
ARENA_MAX = "2"  # MALLOC_ARENA_MAX of the server process, as `make run` sets it
MODELS_DIR_VARIABLE = "ATTNVIZ_MODELS_DIR"  # the app serves its shipped models from there
# Seconds to the first healthy answer: a quiet 2-core machine takes ~3 s; the limit only
# costs time when the server does not come up, so it is generous for a loaded machine.
START_TIMEOUT_S = 180.0


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
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

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


def command(app: Path, port: int, script_args: Sequence[str] = ()) -> list[str]:
    """The ``python -m streamlit run`` command line of one server on 127.0.0.1:``port``."""
    cmd = [sys.executable, "-m", "streamlit", "run", str(app)]
    cmd += ["--server.port", str(port), "--server.address", "127.0.0.1"]
    cmd += ["--server.headless", "true", "--browser.gatherUsageStats", "false"]
    return cmd + (["--", *script_args] if script_args else [])


@contextmanager
def serve(
    app: Path = APP,
    folder: Path | None = None,
    timeout_s: float = START_TIMEOUT_S,
    script_args: Sequence[str] = (),
    env: dict[str, str] | None = None,
    port: int | None = None,
) -> Iterator[Server]:
    """Run ``streamlit run app [-- script_args]`` until the block ends; yields a :class:`Server`.

    Args:
        app: the script (the app, or a bench's own small script).
        folder: the shipped models' folder (laid out like ``exported/``); None: the app's
            default, ``exported/``.
        timeout_s: seconds to wait for the first healthy answer.
        script_args: the app's own arguments (``--model DIR``).
        env: extra environment variables of the server process.
        port: the port on 127.0.0.1; None: a free one.

    Raises:
        RuntimeError: if the server does not answer ``/_stcore/health`` within
            ``timeout_s`` seconds or exits first (the message ends with its output).
    """
    server, proc = spawn(app, folder, script_args, env, port)
    try:
        wait_healthy(server.url, timeout_s, proc, server.log)
        yield server
    finally:
        stop(proc)
        server._log.close()


def spawn(
    app: Path = APP,
    folder: Path | None = None,
    script_args: Sequence[str] = (),
    env: dict[str, str] | None = None,
    port: int | None = None,
    detach: bool = False,
) -> tuple[Server, subprocess.Popen]:
    """Start ``streamlit run app`` on 127.0.0.1:``port`` (None: a free one) and return at
    once, without waiting for it to answer (:func:`serve`'s arguments). ``detach``: in a
    session of its own, so a terminal's Ctrl+C reaches only the caller, which stops it.
    The caller stops it (:func:`stop`) and closes ``server._log``."""
    port = port or free_port()
    full_env = os.environ | {"MALLOC_ARENA_MAX": ARENA_MAX, "PYTHONPATH": str(ROOT)}
    if folder is not None:
        full_env[MODELS_DIR_VARIABLE] = str(Path(folder).resolve())
    full_env |= env or {}
    log = tempfile.TemporaryFile()  # a pipe nobody reads could fill up and stall the server
    proc = subprocess.Popen(
        command(app, port, script_args),
        cwd=ROOT,
        env=full_env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=detach,
    )
    return Server(f"http://127.0.0.1:{port}", psutil.Process(proc.pid), log), proc


def stop(proc: subprocess.Popen) -> None:
    """Terminate ``proc``, kill it if it has not exited 10 s later, and reap it."""
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def wait_healthy(url: str, timeout_s: float, proc: subprocess.Popen, log=lambda: "") -> None:
    """Poll ``url``/_stcore/health until it answers 200.

    Raises:
        RuntimeError: after ``timeout_s`` seconds, or when ``proc`` exits first (the
            message ends with the last 2000 characters of ``log()``).
    """
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    why = f"exited with {proc.returncode}" if proc.poll() is not None else f"{timeout_s:.0f} s"
    raise RuntimeError(f"streamlit did not start at {url} ({why}): " + log()[-2000:])
