"""The checkpoints section runs at tiny sizes (real conversions, real graphs) and renders."""

from __future__ import annotations

import pytest

from bench.checkpoints import checkpoints
from bench.report import render
from ui.views import RENDERERS


@pytest.mark.slow
def test_checkpoints_section_measures_and_renders(tiny_folder):
    data = checkpoints(tiny_folder, quick=True)
    assert data["views"]["T"] == 32 and data["views"]["total_ms"] > data["views"]["arrays_ms"]
    assert set(data["views"]["views_ms"]) == set(RENDERERS)  # every view of the app
    assert data["conversion"]["output_mb"] < data["conversion"]["file_mb"]  # no optimizer state
    assert [r["T"] for r in data["gpt2"]["analyses"]] == [8, 32]
    text = render({"machine": {}, "checkpoints": data})
    assert "CLI conversion of a nanoGPT checkpoint" in text
    assert "Every view of that model at T = 32" in text and "T = 32 (served" in text
