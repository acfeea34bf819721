"""Timing helpers of ``inference/measure.py`` (no timing asserts)."""

import numpy as np
import pytest

from inference.measure import fit_slope


def test_fit_slope_recovers_synthetic_power_laws():
    x = np.array([256, 512, 1024, 2048, 4096, 8192], float)
    assert fit_slope(x, 3.0 * x**1.0) == pytest.approx(1.0)
    assert fit_slope(x, 0.01 * x**2) == pytest.approx(2.0)
    noise = np.random.default_rng(0).uniform(0.95, 1.05, x.size)
    assert fit_slope(x, 5.0 * x**1.5 * noise) == pytest.approx(1.5, abs=0.05)


def test_fit_r2_and_the_warnings_a_teacher_sees():
    """#20 item 3: a poor log-log fit, scattered times and a busy machine are said."""
    from inference.measure import GOOD_FIT_R2, fit_r2, fit_warnings

    x = [64, 128, 256, 512, 1024]
    assert fit_r2(x, [0.01 * t**2 for t in x]) == pytest.approx(1.0)
    kinked = [1.0, 1.0, 1.0, 8.0, 64.0]  # flat, then T³: no one line describes it
    assert fit_r2(x, kinked) < GOOD_FIT_R2
    good = {"fit_r2": 0.999, "spread": 1.1}
    assert fit_warnings({"softmax": good, "linear": good, "load_per_core": 0.5}) == []
    said = fit_warnings(
        {
            "softmax": {"fit_r2": 0.8, "spread": 1.1},
            "linear": {"fit_r2": 0.99, "spread": 2.4},
            "load_per_core": 3.0,
        }  # fmt: skip
    )
    assert len(said) == 3
    assert "softmax fit is poor (R² 0.80)" in said[0]
    assert "linear times scattered" in said[1] and "2.4×" in said[1]
    assert "busy" in said[2] and "3.0 per core" in said[2]
    # #44 item 10: a live Measure said "poor (R² 0.98)" of a fit of 0.9776 < 0.98
    (near,) = fit_warnings({"softmax": {"fit_r2": 0.9776}, "linear": good})
    assert "(R² 0.97)" in near, near


def test_memory_is_measured_on_every_run(exported_dir):
    """#20 item 3: every peak is positive, also when an earlier, larger run left freed
    pages in the heap (before, the second Measure read 0 MB and no chart was drawn)."""
    from inference.measure import scaling
    from inference.runtime import load_shipped

    models = {k: load_shipped(exported_dir, k) for k in ("softmax", "linear")}
    scaling(models, [512, 1024], max_repeats=1, budget_s=0.0, min_repeats=1, ratio_repeats=1)
    sc = scaling(models, [64, 128, 256], max_repeats=1, budget_s=0.0, min_repeats=1)
    for kind in models:
        assert all(m is not None and m > 0 for m in sc[kind]["peak_mb"]), sc[kind]["peak_mb"]
        assert sc[kind]["memory_slope"] is not None
        assert sc[kind]["fit_r2"] is not None and sc[kind]["top_slope"] is not None
    assert sc["load_per_core"] is None or sc["load_per_core"] >= 0
