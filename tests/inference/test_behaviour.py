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


def test_recall_example_and_scoring():
    ids, values, answer = behaviour.recall_example(list(range(100)), 5, np.random.default_rng(1))
    assert len(ids) == 11 and ids[-1] == ids[2 * answer] and ids[2 * answer + 1] == values[answer]
    logits = np.zeros(100)
    logits[values[answer]] = 1.0
    assert behaviour.recall_correct(logits, values, answer)
    logits[values[answer - 1]] = 2.0
    assert not behaviour.recall_correct(logits, values, answer)
    assert behaviour.recall_correct(np.eye(100)[values[0]], values[:1], 0)  # n = 1


def test_recall_accuracy_of_a_perfect_and_a_blind_model():
    words = list(range(100))

    def perfect(ids):  # finds the query's earlier position and reads the word after it
        logits = np.zeros((len(ids), 100))
        logits[-1, ids[ids.index(ids[-1]) + 1]] = 1.0
        return logits

    assert behaviour.recall_accuracy(perfect, words, 8, 20) == 1.0
    assert behaviour.recall_accuracy(lambda ids: np.zeros((len(ids), 100)), words, 8, 20) == 0.0
