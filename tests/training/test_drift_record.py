"""The record that decides when ``make test`` re-runs the drift tests (tests/helpers/drift.py)."""

from __future__ import annotations

from tests.helpers import drift


def test_the_inputs_cover_the_shipped_files_and_the_evaluation_code():
    files = drift.inputs()
    for path in (
        "exported/model_card.json",
        "exported/softmax.safetensors",
        "exported/seq2seq_card.json",
        "training/evaluate.py",  # the evaluations
        "training/evaluate_seq2seq.py",
        "models/transformer.py",  # what they import
        "corpus/heldout.py",
        "inference/runtime.py",  # what the drift tests import themselves
        "tests/export/test_shipped.py",
    ):
        assert path in files, path
    assert not any(p.startswith(("ui/", "bench/")) for p in files)  # not what they depend on


def test_a_changed_added_or_removed_file_is_named():
    old = {"a": "1", "b": "2", "c": "3"}
    assert drift.changed(old, dict(old)) == []
    assert drift.changed(old, {"a": "1", "b": "9", "d": "4"}) == ["b", "c", "d"]


def test_the_record_is_read_back_as_written(tmp_path, monkeypatch):
    monkeypatch.setattr(drift, "RECORD", tmp_path / "checked.json")
    monkeypatch.setattr(drift, "inputs", lambda: {"x": "0"})
    assert drift.recorded() == {} and drift.main(["--check"]) == 1
    assert drift.main(["--write"]) == 0
    assert drift.recorded() == {"x": "0"} and drift.main(["--check"]) == 0
