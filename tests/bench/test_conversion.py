"""The bench's CLI-conversion measurement runs, on a small nanoGPT checkpoint (the bench
times nanoGPT's 129 MB baby GPT; no timing is asserted here)."""

from __future__ import annotations

import pytest

from bench.conversion import BABY_GPT, cli_conversion


@pytest.mark.slow
def test_cli_conversion_measures_a_checkpoint_with_its_optimizer_state(tmp_path):
    small = dict(BABY_GPT, n_layer=1, n_head=2, n_embd=32, block_size=16)
    result = cli_conversion(runs=1, folder=tmp_path, args=small)
    assert result["parameters"] == 65 * 32 + 16 * 32 + 12 * 32 * 32 + 3 * 32
    assert result["weights_mb"] < result["output_mb"] < result["file_mb"]  # AdamW: 2x weights
    assert result["seconds"] > 0 and len(result["seconds_all"]) == 1
    assert 0 < result["worker_growth_mb"] < result["worker_peak_mb"]
    assert result["cli_peak_mb"] > result["output_mb"]
