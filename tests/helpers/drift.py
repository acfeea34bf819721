"""When the drift tests must run again: a hash of every file their answer depends on.

The drift tests (``@pytest.mark.drift``) re-evaluate the shipped models and compare the
model cards with what evaluation measures now (~2 minutes on the 2-core machine). Their
answer can only change when ``exported/`` or the code evaluation runs changes, so
``make check-models`` runs them and, when they pass, records the SHA-256 of each of those
files in ``tests/models_checked.json``; ``make test`` compares (well under a second) and
runs ``make check-models`` only when a file differs.

The code is every module of ours that the evaluations and the drift tests import,
directly or not, at module level or inside a function (grimp's import graph, the one
``lint-imports`` checks).

Usage: ``python -m tests.helpers.drift --check`` (exit 1 and the changed files when the
record is stale) or ``--write`` (record the files as they are now).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from tests.helpers import EXPORTED, ROOT

RECORD = ROOT / "tests" / "models_checked.json"
PACKAGES = ("training", "export", "inference", "lessons", "models", "viz", "corpus", "upload")
EVALUATIONS = ("training.evaluate", "training.evaluate_seq2seq")
DRIFT_TESTS = ("tests/export/test_shipped.py", "tests/training/test_evaluate_seq2seq.py")


def _module_file(module: str) -> Path:
    base = ROOT.joinpath(*module.split("."))
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


def _code_files() -> list[Path]:
    """Source files of the evaluations and the drift tests, and of every module of ours
    they import (transitively)."""
    import grimp

    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    modules = set(EVALUATIONS)
    for module in EVALUATIONS:
        modules |= graph.find_upstream_modules(module)
    for test in DRIFT_TESTS:  # what the test files import themselves
        for line in (ROOT / test).read_text().splitlines():
            words = line.split()
            if len(words) >= 2 and words[0] in ("from", "import") and words[1] in graph.modules:
                modules |= {words[1], *graph.find_upstream_modules(words[1])}
    files = {_module_file(m) for m in modules} | {ROOT / t for t in DRIFT_TESTS}
    return sorted(f for f in files if f.is_file())


def inputs() -> dict[str, str]:
    """Relative path -> SHA-256 of every file the drift tests' answer depends on."""
    files = [p for p in sorted(EXPORTED.rglob("*")) if p.is_file()] + _code_files()
    return {str(p.relative_to(ROOT)): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


def changed(recorded: dict[str, str], now: dict[str, str]) -> list[str]:
    """Files added, removed or changed between two :func:`inputs` (sorted)."""
    return sorted(k for k in recorded.keys() | now.keys() if recorded.get(k) != now.get(k))


def recorded() -> dict[str, str]:
    """What ``make check-models`` last recorded ({} when nothing was)."""
    try:
        return json.loads(RECORD.read_text())["sha256"]
    except (OSError, ValueError, KeyError):
        return {}


def wants_write(argv: list[str] | None, doc: str, stale: str, now: str) -> bool:
    """Parse a record's command line: ``--check`` (help ``stale``: when it exits 1) or
    ``--write`` (help ``now``), one of them; True for ``--write``. Exits 2 on anything else."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--check", action="store_true", help=f"exit 1 if {stale}")
    action.add_argument("--write", action="store_true", help=f"record {now}")
    return parser.parse_args(argv).write


def main(argv: list[str] | None = None) -> int:
    write = wants_write(argv, __doc__, "the record is stale", "the files as they are now")
    now = inputs()
    if write:
        RECORD.write_text(json.dumps({"sha256": now}, indent=1, sort_keys=True) + "\n")
        print(f"recorded {len(now)} files in {RECORD}")
        return 0
    stale = changed(recorded(), now)
    if stale:
        shown = ", ".join(stale[:8]) + (f" and {len(stale) - 8} more" if len(stale) > 8 else "")
        print(f"changed since `make check-models` last passed: {shown}")
        return 1
    print(f"the drift tests' {len(now)} input files are as last checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
