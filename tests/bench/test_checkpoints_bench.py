"""The checkpoints section runs at tiny sizes (real conversions, real graphs) and renders."""

from __future__ import annotations

import pytest

from bench.checkpoints import checkpoints
from bench.common import BENCH_KINDS as SHIPPED_KINDS
from bench.common import shipped
from bench.report import render


@pytest.mark.slow
def test_checkpoints_section_measures_and_renders(tiny_folder):
    models = {kind: shipped(kind, tiny_folder) for kind in SHIPPED_KINDS}
    data = checkpoints(models, quick=True)
    assert data["views"]["T"] == 32 and data["views"]["total_ms"] > data["views"]["arrays_ms"]
    assert data["conversion"]["output_mb"] < data["conversion"]["file_mb"]  # no optimizer state
    assert [r["T"] for r in data["gpt2"]["analyses"]] == [8, 32]
    text = render({"machine": {}, "checkpoints": data})
    assert "CLI conversion of a nanoGPT checkpoint" in text
    assert "Every view of that model at T = 32" in text and "T = 32 (served" in text
