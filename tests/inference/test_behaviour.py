"""Behavioural scores from logits alone (inference/behaviour.py, issue #22)."""

from __future__ import annotations

import numpy as np
import pytest

from inference import behaviour

V = 40


def copier_logits(ids: list[int], period: int, copy: bool) -> np.ndarray:
    """(T, V) logits: uniform, or (``copy``) sure of the next word on the second copy."""
    logits = np.zeros((len(ids), V))
    if copy:
        for t in range(period, len(ids) - 1):
            logits[t, ids[t + 1]] = 50.0
    return logits


def test_copy_losses_drop_only_for_a_model_that_copies():
    ids = behaviour.repeated_sequence(list(range(V)), 10, np.random.default_rng(0))
    first, second = behaviour.copy_losses(copier_logits(ids, 10, copy=False), ids, 10)
    assert first == pytest.approx(np.log(V)) and second == pytest.approx(np.log(V))
    first, second = behaviour.copy_losses(copier_logits(ids, 10, copy=True), ids, 10)
    assert first == pytest.approx(np.log(V)) and second < 1e-6


def test_copy_losses_refuses_a_sequence_that_is_not_repeated():
    with pytest.raises(ValueError, match="repeated twice"):
        behaviour.copy_losses(np.zeros((4, V)), [1, 2, 3, 4], 2)


def test_behavioural_induction_score_is_the_drop():
    words = list(range(2, V))

    def logits_of(ids):
        return copier_logits(ids, behaviour.INDUCTION_PERIOD, copy=True)

    with pytest.raises(ValueError, match="distinct words"):
        behaviour.repeated_sequence(words[:5], 24, np.random.default_rng(0))
    result = behaviour.behavioural_induction(logits_of, list(range(V)))
    assert result["score"] == pytest.approx(np.log(V), abs=1e-3)
    assert result["second_copy_loss"] < 1e-3
