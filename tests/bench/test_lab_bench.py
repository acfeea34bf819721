"""The lab section of the bench (bench/lab.py) runs and its rows render (one model, one
length, one repeat: the code path, not the numbers)."""

from __future__ import annotations

from bench import lab as lab_bench
from bench.sections.lab import lab


def test_lab_section_measures_every_row(exported_dir, monkeypatch):
    monkeypatch.setattr(lab_bench, "KINDS", ("softmax",))
    monkeypatch.setattr(lab_bench, "LENGTHS", (16,))
    data = lab_bench.lab_bench(exported_dir, repeats=1)
    row = data["models"]["softmax"]["16"]
    assert set(row) == {"rerun", "grid", "patch_heads", "patch_resid", "grid_shape"}
    assert row["grid_shape"] == [3, 4] and row["rerun"]["n"] == 1
    rows = lab(data, {})
    assert len(rows) == 4 and all(r[3] in ("yes", "**no**") for r in rows), rows
