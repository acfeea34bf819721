"""Nadaraya-Watson kernel regression: a softmax over keys, nearest key to mean of values."""

from __future__ import annotations

import numpy as np
import pytest

from lessons import nadaraya_watson as nw


def test_the_weights_are_a_softmax_over_the_keys():
    x, y = nw.toy_data(40, seed=1)
    queries = np.linspace(0, 5, 30)
    for width in (0.01, 0.3, 1.0, 100.0):
        pred, weights = nw.predict(queries, x, y, width)
        assert weights.shape == (30, 40) and np.allclose(weights.sum(1), 1.0)
        assert (weights >= 0).all() and np.allclose(pred, weights @ y)
    _, narrow = nw.predict(queries, x, y, 1e-4)  # a narrow kernel: the nearest key
    nearest = np.abs(queries[:, None] - x[None, :]).argmin(1)
    assert (narrow.argmax(1) == nearest).all()
    wide, _ = nw.predict(queries, x, y, 1e4)  # a wide one: the mean of every value
    assert np.allclose(wide, y.mean(), atol=1e-6)
    with pytest.raises(ValueError, match="width must be positive"):
        nw.attention_weights(queries, x, 0.0)


def test_a_moderate_kernel_fits_the_function_better_than_either_extreme():
    x, y = nw.toy_data(200, seed=2)
    grid = np.linspace(0.2, 4.8, 50)
    err = {w: np.abs(nw.predict(grid, x, y, w)[0] - nw.true_function(grid)).mean()
           for w in (0.01, 0.3, 5.0)}  # fmt: skip
    assert err[0.3] < err[0.01] and err[0.3] < err[5.0]
