"""Whether the slow tier of the tests already passed on this very tree.

``make test`` always runs lint and the fast tier (every test not marked ``slow``: about
two minutes on the 2-core machine). The slow tier (``@pytest.mark.slow``: the browser
tests, uploads through export workers, the bench's own runs, the hostile and fair-share
suites, any test over 4 s; about 20 minutes) runs in ``make test`` unless
``make test-slow`` (or ``make test-all``) passed on exactly the files checked out now: it
records the SHA-256 of every file git tracks or would track (``git ls-files --cached
--others --exclude-standard``) in ``tests/slow_passed.json``, and ``--check`` compares.
Commit the record with the change it vouches for; any other change to any file makes
``make test`` run the slow tier again. Markdown files are left out (no slow test reads
one), as are the records themselves. It is the drift tests' scheme
(``tests/helpers/drift.py``) for the whole slow tier.

Usage: ``python -m tests.helpers.tiers --check`` (exit 1 and what changed, when the slow
tier must run) or ``--write`` (record the tree as it is now).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

from tests.helpers import ROOT
from tests.helpers.drift import changed, wants_write

RECORD = ROOT / "tests" / "slow_passed.json"
LEFT_OUT = {"tests/slow_passed.json", "tests/models_checked.json"}


def tree() -> dict[str, str]:
    """Relative path -> SHA-256 of every file git tracks or would track, but Markdown
    files and the records.

    Raises:
        subprocess.CalledProcessError, FileNotFoundError: outside a git checkout.
    """
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    paths = sorted({p for p in listed.split("\0") if p} - LEFT_OUT)
    out = {}
    for path in paths:
        file = ROOT / path
        if not path.endswith(".md") and file.is_file():  # a deleted file is still listed
            out[path] = hashlib.sha256(file.read_bytes()).hexdigest()
    return out


def python() -> str:
    """The interpreter's major.minor: the record holds for this one only."""
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def recorded() -> dict:
    """The record ``make test-slow`` last wrote ({} when there is none)."""
    try:
        return json.loads(RECORD.read_text())
    except (OSError, ValueError):
        return {}


def main(argv: list[str] | None = None) -> int:
    write = wants_write(argv, __doc__, "the slow tier must run", "the tree as it is now")
    try:
        now = tree()
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"slow tier: cannot list the files ({exc}); it runs")
        return 1
    if write:
        record = {"python": python(), "files": len(now), "sha256": now}
        RECORD.write_text(json.dumps(record, indent=0, sort_keys=True) + "\n")
        print(f"slow tier: recorded {len(now)} files in {RECORD.relative_to(ROOT)}")
        return 0
    record = recorded()
    if record.get("python") != python():
        print(f"slow tier: no record for Python {python()}; it runs")
        return 1
    stale = changed(record.get("sha256", {}), now)
    if stale:
        more = f" and {len(stale) - 5} more" if len(stale) > 5 else ""
        print(f"slow tier: {len(stale)} files changed since it passed "
              f"({', '.join(stale[:5])}{more}); it runs")  # fmt: skip
        return 1
    print(f"slow tier: passed on this very tree ({len(now)} files, {RECORD.name}); skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
