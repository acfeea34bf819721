"""inference.delta_rule: one token of "erase, then write" agrees with the graph."""

from __future__ import annotations

import numpy as np
import pytest

from inference.analysis import analyze
from inference.delta_rule import delta_step
from inference.runtime import load_shipped
from tests.helpers import EXPORTED

TEXT = "the old man walked home . the old man walked home ."


@pytest.fixture(scope="module")
def result():
    return analyze(load_shipped(EXPORTED, "delta"), TEXT, recurrent=False)


def test_the_step_rebuilds_the_graphs_next_state_and_output(result):
    out = result.outputs
    for layer, head, t in [(0, 0, 0), (1, 2, 5), (2, 3, result.T - 1)]:
        step = delta_step(result, layer, head, t)
        assert np.abs(step.after - out["state"][layer, head, t]).max() < 1e-4
        assert np.abs(step.output - out["head_out"][layer, head, t]).max() < 1e-4
        assert np.linalg.matrix_rank(step.update, tol=1e-9) <= 1  # a rank-1 write
        assert 0.0 < step.beta < 1.0


def test_the_first_token_reads_nothing_and_the_write_moves_towards_the_value(result):
    first = delta_step(result, 0, 0, 0)
    assert np.all(first.before == 0) and np.all(first.read == 0)
    assert first.recall_before == pytest.approx(1.0)
    for t in range(result.T):  # |k_t| = 1: the write shrinks the error by (1 − β_t)
        step = delta_step(result, 1, 1, t)
        assert step.recall_after == pytest.approx((1 - step.beta) * step.recall_before, abs=1e-4)


def test_a_position_outside_the_sentence_is_refused(result):
    with pytest.raises(ValueError, match="outside"):
        delta_step(result, 0, 0, result.T)
