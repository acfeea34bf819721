"""The counts that close ``make test``: passed, failed and skipped per tier, read from the
JUnit XML files of its pytest runs (``--junitxml``).

Each test case carries its tier as a JUnit property (``tests/conftest.py`` adds it at
collection): ``drift`` for ``@pytest.mark.drift``, ``slow`` for ``@pytest.mark.slow``
(so the slow tier's count is what ``pytest --collect-only -m slow`` collects), ``fast``
for the rest. The last line is the total in the plain form CI reads
(``total: N passed, N failed, N skipped``).

Usage: ``python -m tests.helpers.counts REPORT.xml [REPORT.xml ...]``; exit 1 when a
file is missing or unreadable, or any test failed.
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

TIERS = ("fast", "slow", "drift")


def outcomes(path: Path) -> dict[str, tuple[str, str]]:
    """Test id -> (tier, outcome) for one JUnit XML file; outcome is ``passed``,
    ``failed`` (a failure or an error in any phase) or ``skipped``.

    Raises:
        OSError, xml.etree.ElementTree.ParseError: an unreadable file.
    """
    out: dict[str, tuple[str, str]] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        key = f"{case.get('classname')}::{case.get('name')}"
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        tier = props.get("tier", "fast")
        if case.find("failure") is not None or case.find("error") is not None:
            outcome = "failed"
        elif case.find("skipped") is not None:
            outcome = "skipped"
        else:
            outcome = "passed"
        if out.get(key, ("", ""))[1] != "failed":  # a teardown error is its own entry
            out[key] = (tier, outcome)
    return out


def line(name: str, counts: Counter) -> str:
    """``name: N passed, N failed, N skipped``."""
    return (
        f"{name}: {counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped"
    )


def main(argv: list[str] | None = None) -> int:
    paths = [Path(p) for p in (sys.argv[1:] if argv is None else argv)]
    merged: dict[str, tuple[str, str]] = {}
    for path in paths:
        try:
            merged.update(outcomes(path))
        except (OSError, ET.ParseError) as exc:
            print(f"counts: {path}: no JUnit report ({exc}); its tests did not run")
            return 1
    per_tier = {tier: Counter() for tier in TIERS}
    for tier, outcome in merged.values():
        per_tier.setdefault(tier, Counter())[outcome] += 1
    total = sum(per_tier.values(), Counter())
    for tier, counts in per_tier.items():
        print(line(tier, counts))
    print(line("total", total))
    return 1 if total["failed"] or not paths else 0


if __name__ == "__main__":
    sys.exit(main())
