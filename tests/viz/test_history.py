"""The training history's curves (viz/history.py, issue #46): a line per model and
measure at the real steps, each phase change a dashed line on every panel."""

from __future__ import annotations

import numpy as np
import pytest

from inference.history import CURVES
from viz.history import history_curves

STEPS = [0, 10, 100, 1000, 3000]


def histories() -> dict:
    def h(phase, scale):
        curves = {key: list(np.linspace(0, scale, len(STEPS))) for key in CURVES}
        return {"steps": STEPS, "curves": curves, "phase_change_step": phase}

    return {"softmax": h(1000, 1.0), "linear": h(None, 0.2)}


def test_each_measure_has_a_line_per_model_at_the_real_steps():
    fig = history_curves(histories(), CURVES, 0.4)
    assert len(fig["data"]) == len(CURVES) * 2
    for trace, (key, kind) in zip(fig["data"], [(k, m) for k in CURVES for m in ("softmax", "linear")], strict=True):  # fmt: skip
        assert trace["name"] == kind
        assert trace["x"] == [s + 1 for s in STEPS] and trace["customdata"] == STEPS  # log axis
        assert trace["y"] == histories()[kind]["curves"][key]
    titles = [a["text"] for a in fig["layout"]["annotations"]]
    assert [t for t in titles if t in {c[0] for c in CURVES.values()}] == [
        c[0] for c in CURVES.values()
    ]
    assert "softmax: induction head at step 1,000" in titles
    label = next(a for a in fig["layout"]["annotations"] if a["text"].startswith("softmax:"))
    assert label["x"] == pytest.approx(np.log10(1001))  # annotations on a log axis: log10 units
    assert not any(t.startswith("linear:") for t in titles)  # it has no phase change
    ticks = fig["layout"]["xaxis"]
    assert ticks["type"] == "log" and ticks["ticktext"][0] == "0" and ticks["tickvals"][0] == 1


def test_the_phase_change_is_marked_on_every_panel_and_the_threshold_once():
    shapes = history_curves(histories(), CURVES, 0.4)["layout"]["shapes"]
    vertical = [s for s in shapes if s["x0"] == s["x1"]]
    assert len(vertical) == len(CURVES) and {s["x0"] for s in vertical} == {1001}
    horizontal = [s for s in shapes if s.get("y0") == s.get("y1") == 0.4]
    assert len(horizontal) == 1 and horizontal[0]["yref"] == "y3"  # the prefix-matching panel


def test_two_measures_sit_side_by_side():
    two = {k: CURVES[k] for k in ("best_prefix_matching", "icl_score")}
    fig = history_curves(histories(), two, 0.4, height=360)
    layout = fig["layout"]
    assert layout["height"] == 360 and layout["yaxis"]["domain"] == layout["yaxis2"]["domain"]
    assert layout["xaxis"]["domain"][1] < layout["xaxis2"]["domain"][0]


def test_a_curve_of_the_wrong_length_is_refused():
    bad = histories()
    bad["linear"]["curves"]["val_loss"] = [1.0]
    with pytest.raises(ValueError, match="linear: 1 values of val_loss for 5 steps"):
        history_curves(bad, CURVES, 0.4)
