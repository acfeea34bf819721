"""Test data built once per run and shared by pytest-xdist's workers (a file lock), the
pattern of pytest-xdist's docs ("Making session-scoped fixtures execute only once")."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

from filelock import FileLock


def built_once(tmp_path_factory, name: str, build: Callable[[Path], object]) -> Path:
    """The folder ``name`` of this test run, filled by ``build(folder)`` by the first
    worker that asks; the others wait for it and reuse it. Without xdist it is this
    session's own folder (``getbasetemp().parent`` would then be shared between runs)."""
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder, done = root / f"shared-{name}", root / f"shared-{name}.done"
    with FileLock(str(root / f"shared-{name}.lock")):
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            build(folder)
            done.touch()
    return folder
