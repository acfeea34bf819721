"""lessons.forgetting: the additive state leaks other pairs into a recall, the delta rule
replaces; both are exact on orthogonal keys."""

from __future__ import annotations

import numpy as np
import pytest

from lessons.forgetting import (
    additive_state,
    capacity_curves,
    delta_state,
    recall_error,
    recall_table,
)


def test_orthogonal_keys_are_recalled_exactly_by_both_states():
    rng = np.random.default_rng(1)
    d = 8
    keys = np.linalg.qr(rng.standard_normal((d, d)))[0].T  # (d, d) orthonormal rows
    values = rng.standard_normal((d, d))
    assert recall_error(additive_state(keys, values), keys, values) < 1e-12
    assert recall_error(delta_state(keys, values), keys, values) < 1e-12


def test_a_repeated_key_is_overwritten_by_the_delta_rule_and_summed_by_the_additive_state():
    k = np.array([[1.0, 0.0], [1.0, 0.0]])  # the same key twice, two different values
    v = np.array([[1.0, 0.0], [0.0, 1.0]])
    assert np.allclose(delta_state(k, v).T @ k[0], v[1])  # the newer value replaced the old
    assert np.allclose(additive_state(k, v).T @ k[0], v[0] + v[1])  # both, mixed


def test_the_delta_rules_error_stays_below_the_additive_ones_as_pairs_grow():
    curves = capacity_curves(16, [1, 4, 16, 32], trials=10)
    assert curves["additive"][0] == pytest.approx(0.0, abs=1e-12)
    assert all(np.diff(curves["additive"]) > 0)  # more pairs, more interference
    assert all(d < a for d, a in zip(curves["delta"][1:], curves["additive"][1:], strict=True))


def test_recall_table_ranks_the_values_by_the_models_probability():
    logits = np.zeros(10)
    logits[[3, 5, 7]] = [1.0, 3.0, 2.0]
    row = recall_table(logits, [3, 5, 7], answer=1)
    assert row["picked"] == 1 and row["ranks_first"]
    assert row["top"] == 5 and row["top_right"]
    assert row["probs"].shape == (3,) and np.all(np.diff(row["probs"][[0, 2, 1]]) > 0)
    with pytest.raises(ValueError):
        capacity_curves(0, [1])


def test_recall_table_counts_a_word_outside_the_example_against_the_top_token_rule():
    """#46: the model says "." (id 0) but ranks the right value first among the values:
    right by the ranking rule, wrong by the card's headline rule."""
    logits = np.zeros(10)
    logits[[0, 3, 5, 7]] = [9.0, 1.0, 3.0, 2.0]
    row = recall_table(logits, [3, 5, 7], answer=1)
    assert row["ranks_first"] and row["picked"] == 1
    assert row["top"] == 0 and not row["top_right"]
