"""Temporary folders of uploads: one per conversion, removed on every exit path, and
stale ones (left by a server that was killed) removed when the server starts; the same
for a server's cache of exported graphs (``upload.export_cache``)."""

from __future__ import annotations

import shutil
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import psutil

TEMP_PREFIX = "attnviz-upload-"
EXPORTS_PREFIX = "attnviz-exports-"  # + the server's process id (upload.export_cache)


@contextmanager
def workdir():
    """A fresh ``mkdtemp`` folder (prefix TEMP_PREFIX), removed on every exit path."""
    path = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def remove_stale_workdirs(older_than_s: float = 600.0) -> int:
    """Remove upload temp folders left by a server that was killed (call at start-up):
    conversions' folders older than ``older_than_s``, export caches whose server process
    is gone (another server on this machine keeps its own).

    Returns:
        How many folders were removed.
    """
    removed = 0
    for path in Path(tempfile.gettempdir()).glob(f"{EXPORTS_PREFIX}*"):
        pid = path.name[len(EXPORTS_PREFIX) :].split("-")[0]
        if path.is_dir() and not (
            pid.isascii() and pid.isdecimal() and psutil.pid_exists(int(pid))
        ):
            shutil.rmtree(path, ignore_errors=True)
            removed += 1
    for path in Path(tempfile.gettempdir()).glob(f"{TEMP_PREFIX}*"):
        try:
            if path.is_dir() and time.time() - path.stat().st_mtime > older_than_s:
                shutil.rmtree(path, ignore_errors=True)
                removed += 1
        except OSError:
            continue
    return removed
