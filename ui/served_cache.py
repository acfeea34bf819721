"""The on-disk cache of served folders (``ui/served.py``): where converted folders are
kept, each one converted once by ``python -m upload.convert`` in a child process (the
server never imports torch), and half-written conversions of servers gone removed."""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from upload.limits import normal_priority

ROOT = Path(__file__).resolve().parents[1]
CACHE_VARIABLE = "ATTNVIZ_CACHE_DIR"  # where converted folders are kept
_CONVERTING: set[subprocess.Popen] = set()  # conversions running now (stopped at exit)


def cache_root() -> Path:
    """``$ATTNVIZ_CACHE_DIR``, else ``$XDG_CACHE_HOME/attention-visualizer`` (by default
    ``~/.cache/attention-visualizer``)."""
    if os.environ.get(CACHE_VARIABLE):
        return Path(os.environ[CACHE_VARIABLE])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "attention-visualizer"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def remove_stale(root: Path) -> None:
    """Remove half-written conversions (``.<key>-<digest>.<pid>.tmp``) whose server is gone."""
    for tmp in root.glob(".*.tmp") if root.is_dir() else []:
        pid = tmp.name.rsplit(".", 2)[-2]
        if pid.isascii() and pid.isdecimal() and not _alive(int(pid)):
            shutil.rmtree(tmp, ignore_errors=True)


@atexit.register
def _stop_conversions() -> None:
    """A server that stops ends its conversions (their workers end with their pipes)."""
    for proc in list(_CONVERTING):
        proc.kill()


CONVERT_NICE = 10


def lower_priority(pid: int) -> None:
    """Nice the converter ``pid`` to CONVERT_NICE: the classroom's requests come first.
    Under :func:`upload.limits.normal_priority` (a shared test host) it keeps the normal
    priority; a process already gone is left."""
    if not normal_priority():
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, pid, CONVERT_NICE)


def convert_into(folder: Path, dest: Path, context: int | None = None) -> None:
    """``python -m upload.convert folder --out <tmp> --onnx --inspect-only [--context N]``
    in a child process (:func:`lower_priority`), then the finished folder renamed to
    ``dest`` (a half-written conversion never looks done).

    Raises:
        RuntimeError: the command's one-line refusal or failure.
    """
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    cmd = [sys.executable, "-m", "upload.convert", str(folder), "--out", str(tmp)]
    cmd += ["--onnx", "--inspect-only"]  # the fast graph is never opened (open_converted)
    cmd += ["--context", str(context)] if context is not None else []
    proc = subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    _CONVERTING.add(proc)
    lower_priority(proc.pid)
    try:
        out, err = proc.communicate()
    finally:
        _CONVERTING.discard(proc)
    if proc.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        lines = [line for line in (err or out).splitlines() if line.strip()]
        raise RuntimeError(lines[-1] if lines else f"the converter ended with {proc.returncode}")
    try:
        tmp.replace(dest)
    except OSError:  # another server converted it meanwhile
        shutil.rmtree(tmp, ignore_errors=True)
