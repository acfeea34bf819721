"""The training history (training/history.py, issue #46): which steps are kept and drawn,
where the phase change is, and a whole tiny run through ``train --history`` and
``python -m training.history``."""

from __future__ import annotations

import json

import pytest

from training import recipe
from training.history import GRAPH_COUNT, graph_steps, phase_change

STEPS = list(recipe.HISTORY_STEPS)


def test_the_phase_change_is_the_first_step_at_the_threshold():
    assert phase_change([0, 10, 20, 40], [0.1, 0.39, 0.4, 0.9]) == 20
    assert phase_change([0, 10], [0.1, 0.2]) is None


def test_the_graph_steps_keep_the_ends_and_each_phase_change_with_the_step_before():
    assert graph_steps(STEPS, [None]) == [0, 20, 70, 150, 450, 900, 1800, 3000]
    shown = graph_steps(STEPS, [650, 1300, None])
    assert len(shown) == GRAPH_COUNT and {0, 450, 650, 900, 1300, 3000} <= set(shown)
    assert graph_steps(STEPS[:5], [None]) == STEPS[:5]  # fewer kept than drawn: all
    assert graph_steps(STEPS, [STEPS[0]])[0] == 0  # a phase change at the first step


@pytest.mark.slow
def test_a_tiny_run_keeps_its_history_and_measures_it(tmp_path):
    from training import history, train

    out = tmp_path / "tiny.safetensors"
    sizes = ["--n-layer", "1", "--n-head", "2", "--d-model", "16", "--d-mlp", "32"]
    train.main(["--attention", "softmax", "--steps", "12", "--out", str(out), "--threads", "1",
                "--history", str(tmp_path / "h"), "--context-length", "40", *sizes])  # fmt: skip
    kept = sorted(p.name for p in (tmp_path / "h").iterdir())
    assert kept == ["softmax.step0.safetensors", "softmax.step10.safetensors"]
    history.main(["--history", str(tmp_path / "h"), "--out", str(tmp_path / "o"), "--threads", "1"])
    written = json.loads((tmp_path / "o" / history.HISTORY_FILE).read_text())
    h = written["models"]["softmax"]
    assert h["steps"] == [0, 10] and h["graph_steps"] == [0, 10]
    assert len(h["prefix_matching"]) == 2 and len(h["prefix_matching"][0]) == 1  # (S, L, H)
    assert h["val_loss"][1] < h["val_loss"][0]  # ten steps of training lower the loss
    assert {p.name for p in (tmp_path / "o").glob("*.onnx")} == {
        "softmax.step0.onnx", "softmax.step10.onnx"
    }  # fmt: skip
    assert written["recipe"]["recall_share"] == recipe.RECALL_SHARE
