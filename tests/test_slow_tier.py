"""The record that decides when ``make test`` runs the slow tier (tests/helpers/tiers.py),
on a git checkout of its own, and the tiers themselves."""

from __future__ import annotations

import subprocess

import pytest

from tests.helpers import tiers


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A git checkout with a module, a README and an ignored folder; tiers reads it."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "tests").mkdir()
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "README.md").write_text("# notes\n")
    (tmp_path / ".gitignore").write_text("build/\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "out.bin").write_bytes(b"\0")
    subprocess.run(["git", "-C", str(tmp_path), "add", "a.py"], check=True)  # tracked
    (tmp_path / "b.py").write_text("y = 2\n")  # untracked, not ignored: it would be committed
    monkeypatch.setattr(tiers, "ROOT", tmp_path)
    monkeypatch.setattr(tiers, "RECORD", tmp_path / "tests" / "slow_passed.json")
    return tmp_path


def test_the_tree_is_what_git_would_commit_but_markdown_and_the_records(checkout):
    (checkout / "tests" / "models_checked.json").write_text("{}")
    assert set(tiers.tree()) == {"a.py", "b.py", ".gitignore"}


def test_any_change_to_a_file_brings_the_slow_tier_back(checkout, capsys):
    assert tiers.main(["--check"]) == 1  # no record: it runs
    assert tiers.main(["--write"]) == 0
    assert tiers.main(["--check"]) == 0
    (checkout / "README.md").write_text("# more notes\n")  # Markdown: no test of it is slow
    assert tiers.main(["--check"]) == 0
    (checkout / "b.py").write_text("y = 3\n")
    assert tiers.main(["--check"]) == 1
    assert "1 files changed since it passed (b.py)" in capsys.readouterr().out
    tiers.main(["--write"])
    (checkout / "c.py").write_text("")  # an added file
    assert tiers.main(["--check"]) == 1
    (checkout / "c.py").unlink()
    (checkout / "a.py").unlink()  # a removed one
    assert tiers.main(["--check"]) == 1


def test_a_record_of_another_python_does_not_count(checkout, monkeypatch):
    tiers.main(["--write"])
    monkeypatch.setattr(tiers, "python", lambda: "2.7")
    assert tiers.main(["--check"]) == 1


def test_outside_a_git_checkout_the_slow_tier_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(tiers, "ROOT", tmp_path)
    assert tiers.main(["--check"]) == 1


@pytest.mark.slow  # over 4 s in a full fast run (5-8 s; 9-19 s beside two busy loops)
def test_every_browser_test_and_every_export_fixture_user_is_slow(pytestconfig):
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
    import json
    import sys

    from tests.helpers import ROOT

    out = subprocess.run(
        [sys.executable, "-c", script, *paths], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    return {k: set(v) for k, v in json.loads(out.split("ITEMS", 1)[1]).items()}
