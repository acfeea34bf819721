"""What ``make test`` runs and how it closes (issue #43): every tier, no silent skip, the
counts per tier from its JUnit reports. Each check runs a pytest of its own on a small
test file written here, with this project's conftest."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from tests.helpers import ROOT, counts, skips

SCRATCH = ROOT / "tests" / "_scratch_tiers"


@pytest.fixture
def scratch(request):
    """A test file inside ``tests/`` (so the project's conftest applies), removed after."""
    SCRATCH.mkdir(exist_ok=True)
    path = SCRATCH / f"test_{request.node.name.replace('[', '_').replace(']', '')}.py"
    yield path
    path.unlink(missing_ok=True)
    if not any(SCRATCH.glob("test_*.py")):
        for leftover in SCRATCH.iterdir():
            subprocess.run(["rm", "-rf", str(leftover)], check=False)
        SCRATCH.rmdir()


def _pytest(path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-n",
            "0",
            *args,
            str(path),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


SOURCE = textwrap.dedent(
    """
    import pytest

    def test_fast():
        assert True

    @pytest.mark.slow
    def test_slow():
        assert True

    @pytest.mark.drift
    def test_drift():
        assert True

    def test_skips_for_a_mood():
        pytest.skip("the scenario did not happen this time")

    @pytest.mark.skipif(True, reason="needs a CUDA GPU (onnxruntime's CUDA provider)")
    def test_gpu_only():
        assert False

    @pytest.mark.xfail(reason="known")
    def test_expected_to_fail():
        assert False
    """
)


def test_a_skip_fails_the_run_unless_its_reason_is_allowed(scratch):
    scratch.write_text(SOURCE)
    lenient = _pytest(scratch, "-rs")
    assert lenient.returncode == 0, lenient.stdout
    strict = _pytest(scratch, "-rs", "--strict-skips")
    assert strict.returncode == 1, strict.stdout
    assert "2 failed, 3 passed, 1 skipped" in strict.stdout, strict.stdout
    assert "the scenario did not happen this time" in strict.stdout  # the reason is printed
    assert "SKIPPED [1]" in strict.stdout and "needs a CUDA GPU" in strict.stdout
    assert "xfail: known" in strict.stdout


def test_the_counts_are_per_tier_and_close_the_output(scratch, tmp_path, capsys):
    scratch.write_text(SOURCE)
    report = tmp_path / "run.xml"
    _pytest(scratch, "--strict-skips", "-o", "junit_family=xunit1", f"--junitxml={report}")
    assert counts.main([str(report)]) == 1  # two failed
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "fast: 1 passed, 2 failed, 1 skipped",
        "slow: 1 passed, 0 failed, 0 skipped",
        "drift: 1 passed, 0 failed, 0 skipped",
        "total: 3 passed, 2 failed, 1 skipped",
    ]
    assert counts.main([str(tmp_path / "missing.xml")]) == 1


def test_allowed_reasons_are_prefixes_of_the_short_list():
    assert skips.allowed("Skipped: needs a CUDA GPU (no CUDA provider)")
    assert not skips.allowed("Skipped: the pinned process was not kept waiting")
    assert len(skips.ALLOWED) <= 5


def _make_variable(text: str, name: str) -> str:
    """A Makefile variable's ``:=`` value, its continuation lines joined."""
    value = text.split(f"\n{name} := ", 1)[1]
    lines = []
    for line in value.splitlines():
        lines.append(line.rstrip("\\").strip())
        if not line.endswith("\\"):
            break
    return " ".join(lines)


def test_make_test_runs_every_tier_and_reads_no_record():
    """The Makefile's ``test`` recipe runs pytest on every test (no ``-m`` filter), under
    --strict-skips, closes on the counts, and no file of the tree is a record that could
    make it skip one. (Read as text: ``make -n`` would run a recipe line holding
    ``$(MAKE)``.)"""
    text = (ROOT / "Makefile").read_text()
    pytest_line = next(line for line in text.splitlines() if line.startswith("PYTEST :="))
    assert "--strict-skips" in pytest_line and "-rs" in pytest_line
    recipe = text.split("\ntest: ", 1)[1].split("\n\n", 1)[0]
    runs = {name: _make_variable(text, name) for name in ("PARALLEL_RUN", "ALONE_RUN")}
    for name, run in runs.items():
        assert run.startswith("$(PYTEST) ") and " -m " not in run and "--junitxml" in run, run
        # both branches (the timed suites in a CPU group beside the rest, or after it)
        assert recipe.count(f"$({name})") == 2, name
    assert "tests.helpers.counts" in recipe
    assert "tiers" not in recipe and "drift" not in recipe
    assert not (ROOT / "tests" / "slow_passed.json").exists()
    assert not (ROOT / "tests" / "models_checked.json").exists()


@pytest.mark.slow  # over 4 s in a full fast run (5-8 s; 9-19 s beside two busy loops)
def test_every_browser_test_and_every_export_fixture_user_is_slow():
    """The split itself: collected by pytest as ``make test`` does."""
    items = _collect(
        "tests/e2e/test_readable.py", "tests/upload/test_convert.py", "tests/export/test_export.py"
    )
    slow = {i for i, marks in items.items() if "slow" in marks}
    assert all(i in slow for i in items if i.startswith("tests/e2e/"))
    assert all(i in slow for i in items if i.startswith("tests/upload/test_convert.py::test_onnx"))
    assert "tests/export/test_export.py::test_onnx_matches_pytorch[1-delta]" in slow
    assert "tests/export/test_export.py::test_onnx_matches_pytorch[1-softmax]" not in slow


def _collect(*paths: str) -> dict[str, set[str]]:
    """node id -> its markers' names, for ``paths`` collected in a pytest of its own."""
    script = (
        "import pytest, json, sys\n"
        "class P:\n"
        "    items = {}\n"
        "    def pytest_collection_finish(self, session):\n"
        "        P.items = {i.nodeid: sorted({m.name for m in i.iter_markers()}) for i in session.items}\n"
        "pytest.main(['-q', '--collect-only', '-p', 'no:cacheprovider', *sys.argv[1:]], plugins=[P()])\n"
        "print('ITEMS' + json.dumps(P.items))\n"
    )  # fmt: skip
    out = subprocess.run(
        [sys.executable, "-c", script, *paths], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    return {k: set(v) for k, v in json.loads(out.split("ITEMS", 1)[1]).items()}
