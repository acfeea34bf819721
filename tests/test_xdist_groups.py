"""``make test``'s ``--dist loadgroup`` (with ``-n 3``; ``-n 2`` here) keeps an
``xdist_group`` on one worker, and the tests that share a module-scoped fixture too
(``tests/helpers/xdist_groups.py``): on pytest 9.2 grouping silently stopped
(pytest-dev/pytest-xdist#1386). Runs a pytest of its own on two small test files written
inside ``tests/``, with this project's conftest, on two workers."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

from tests.helpers import ROOT

SCRATCH = ROOT / "tests" / "_scratch_groups"

GROUPED = textwrap.dedent(
    """
    import pytest

    pytestmark = pytest.mark.xdist_group("together")

    @pytest.mark.parametrize("i", range(3))
    def test_grouped(i):
        assert True
    """
)
LOOSE = textwrap.dedent(
    """
    import pytest

    @pytest.mark.parametrize("i", range(4))
    def test_loose(i):
        assert True

    @pytest.mark.xdist_group("together")
    def test_marked_alone():
        assert True

    @pytest.fixture(scope="module")
    def built():
        return [1]

    @pytest.mark.parametrize("i", range(3))
    def test_sharing_a_module_fixture(built, i):
        assert built == [1]
    """
)


def test_a_group_runs_whole_on_one_worker():
    SCRATCH.mkdir(exist_ok=True)
    try:
        (SCRATCH / "test_a_grouped.py").write_text(GROUPED)
        (SCRATCH / "test_b_loose.py").write_text(LOOSE)
        run = subprocess.run(
            [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "-n", "2"]
            + ["--dist", "loadgroup", str(SCRATCH)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=180,
        )
    finally:
        subprocess.run(["rm", "-rf", str(SCRATCH)], check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    ran = re.findall(r"\[(gw\d)\] \[ *\d+%\] PASSED (\S+)", run.stdout)
    assert len(ran) == 11, run.stdout
    grouped = {worker for worker, test in ran if test.endswith("@together")}
    names = [test for _, test in ran if test.endswith("@together")]
    assert len(names) == 4 and len(grouped) == 1, run.stdout  # the mark from either file
    assert not [t for _, t in ran if "test_loose" in t and "@" in t], run.stdout
    # the tests that share a module-scoped fixture: one group, of their module
    sharing = [t for _, t in ran if "test_sharing" in t]
    assert all(t.endswith("@module-tests/_scratch_groups/test_b_loose.py") for t in sharing), (
        sharing
    )
    assert len({w for w, t in ran if "test_sharing" in t}) == 1, run.stdout


def test_the_second_browser_chain_names_browser_modules_that_exist():
    """``tests/e2e/conftest.py`` ``SECOND_CHAIN``: each name a browser module (a renamed
    one would silently move back to the first chain), and both chains hold tests."""
    from tests.e2e.conftest import SECOND_CHAIN

    here = ROOT / "tests" / "e2e"
    assert all((here / f"{name}.py").exists() for name in SECOND_CHAIN), SECOND_CHAIN
    first = {p.stem for p in here.glob("test_*.py")} - SECOND_CHAIN
    assert len(first) >= 5 and len(SECOND_CHAIN) >= 5
