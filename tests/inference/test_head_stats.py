"""Head statistics on hand-built attention patterns."""

from __future__ import annotations

import numpy as np
import pytest

from inference import head_labels
from inference import head_stats as hs


def previous_pattern(t: int) -> np.ndarray:
    """Row 0 attends to itself, every other row to the previous token."""
    a = np.zeros((t, t))
    a[0, 0] = 1.0
    a[np.arange(1, t), np.arange(t - 1)] = 1.0
    return a


def uniform_causal(t: int) -> np.ndarray:
    a = np.tril(np.ones((t, t)))
    return a / a.sum(axis=-1, keepdims=True)


def first_pattern(t: int) -> np.ndarray:
    a = np.zeros((t, t))
    a[:, 0] = 1.0
    return a


def self_pattern(t: int) -> np.ndarray:
    return np.eye(t)


def induction_pattern(period: int, repeats: int = 2) -> np.ndarray:
    t = period * repeats
    a = uniform_causal(t)
    for i in range(period, t):
        a[i] = 0.0
        a[i, i - period + 1] = 1.0
    return a


def stack(*heads: np.ndarray) -> np.ndarray:
    """(H, T, T) patterns -> (1, H, T, T)."""
    return np.stack(heads)[None]


T = 8


def test_previous_token_head_scores_one_and_is_labelled():
    attn = stack(previous_pattern(T), uniform_causal(T))
    prev = hs.previous_token_score(attn)
    assert prev.shape == (1, 2)
    assert prev[0, 0] == pytest.approx(1.0)
    assert prev[0, 1] < 0.5
    table = hs.head_stats_table(attn)
    assert table.loc[0, "label"] == "previous-token"
    assert table.loc[0, "distance"] == pytest.approx((T - 1) / T)
    assert table.loc[0, "entropy"] == pytest.approx(0.0)


def test_uniform_causal_entropy_is_mean_log2_row_length():
    attn = stack(uniform_causal(T))
    expected = np.mean(np.log2(np.arange(1, T + 1)))
    assert hs.entropy(attn)[0, 0] == pytest.approx(expected)
    assert head_labels.uniform_causal_entropy(T) == pytest.approx(expected)
    # each row separately: row i has entropy log2(i + 1)
    one_row = np.zeros((1, 1, T, T))
    one_row[0, 0] = uniform_causal(T)[-1]  # every row uniform over all T keys
    assert hs.entropy(one_row)[0, 0] == pytest.approx(np.log2(T))
    assert hs.head_stats_table(attn).loc[0, "label"] == "broad"


def test_entropy_zero_log_zero_is_zero():
    assert np.isfinite(hs.entropy(stack(self_pattern(T)))).all()
    assert hs.entropy(stack(self_pattern(T)))[0, 0] == 0.0


def test_min_row_sum_finds_the_smallest_row_of_each_head():
    gated = uniform_causal(T) * np.linspace(1.0, 0.3, T)[::-1][:, None]  # row 0 sums to 0.3
    gated[5] *= 0.5  # and row 5 to half of its 0.3 + 0.7 * 5 / 7
    mins = hs.min_row_sum(stack(uniform_causal(T), gated, previous_pattern(T)))
    assert mins.shape == (1, 3)
    assert mins[0, 0] == pytest.approx(1.0) and mins[0, 2] == pytest.approx(1.0)
    assert mins[0, 1] == pytest.approx(0.3)
    gated[0] = 1.0 / T  # now row 5 is the smallest
    assert hs.min_row_sum(stack(gated))[0, 0] == pytest.approx(0.5 * (0.3 + 0.7 * 5 / 7))
    with pytest.raises(ValueError):
        hs.min_row_sum(np.ones((2, T, T)))


def test_first_token_and_distance():
    attn = stack(first_pattern(T), self_pattern(T))
    first = hs.first_token_score(attn)
    assert first[0, 0] == pytest.approx(1.0)
    assert first[0, 1] == pytest.approx(0.0)
    dist = hs.mean_attention_distance(attn)
    assert dist[0, 0] == pytest.approx(np.mean(np.arange(T)))
    assert dist[0, 1] == pytest.approx(0.0)
    labels = hs.head_stats_table(attn)["label"].tolist()
    assert labels == ["first-token (sink)", "local"]


def test_exact_induction_pattern_scores_one():
    period = 5
    attn = stack(induction_pattern(period), uniform_causal(2 * period))
    score = hs.induction_score(attn, period)
    assert score.shape == (1, 2)
    assert score[0, 0] == pytest.approx(1.0)
    assert score[0, 1] < 0.4
    table = hs.head_stats_table(attn, period=period)
    assert "induction" in table.columns
    assert table.loc[0, "label"] == "induction"


def test_induction_errors():
    attn = stack(uniform_causal(6))
    with pytest.raises(ValueError):
        hs.induction_score(attn, period=5)  # T < period + 2
    with pytest.raises(ValueError):
        hs.induction_score(attn, period=0)
    assert hs.induction_score(attn, period=4).shape == (1, 1)


def test_shape_errors():
    with pytest.raises(ValueError):
        hs.previous_token_score(np.zeros((2, 3, 3)))
    with pytest.raises(ValueError):
        hs.entropy(np.zeros((1, 1, 3, 4)))
    with pytest.raises(ValueError):
        hs.first_token_score(np.ones((1, 1, 1, 1)))  # T < 2
    with pytest.raises(ValueError):
        hs.head_stats_table(np.ones((1, 1, 1, 1)))


def test_duplicate_token_score():
    ids = [7, 3, 7, 9, 3]
    a = np.eye(5)
    a[2] = 0.0
    a[2, 0] = 1.0  # "7" looks at the earlier "7"
    a[4] = 0.0
    a[4, 1] = 1.0  # "3" looks at the earlier "3"
    assert hs.duplicate_token_score(stack(a), ids)[0, 0] == pytest.approx(1.0)
    assert hs.duplicate_token_score(stack(np.eye(5)), ids)[0, 0] == pytest.approx(0.0)
    with pytest.raises(ValueError):
        hs.duplicate_token_score(stack(np.eye(3)), [1, 2, 3])
    with pytest.raises(ValueError):
        hs.duplicate_token_score(stack(np.eye(3)), [1, 2])
    table = hs.head_stats_table(stack(a), token_ids=ids)
    assert "duplicate_token" in table.columns


def test_label_heads_thresholds_and_errors():
    z = np.zeros((1, 3))
    scores = {
        "previous_token": np.array([[0.6, 0.2, 0.1]]),
        "first_token": np.array([[0.0, 0.7, 0.1]]),
        "distance": np.array([[1.0, 3.0, 4.0]]),
        "entropy": np.array([[0.5, 0.5, 0.5]]),
        "induction": np.array([[0.9, 0.0, 0.0]]),
    }
    labels = head_labels.label_heads(scores)
    assert labels.shape == (1, 3)
    assert labels.tolist() == [["induction", "first-token (sink)", "mixed"]]
    scores.pop("induction")
    assert head_labels.label_heads(scores)[0, 0] == "previous-token"
    with pytest.raises(KeyError):
        head_labels.label_heads({"previous_token": z})
    with pytest.raises(ValueError):
        head_labels.label_heads({**scores, "entropy": np.zeros((2, 2))})


def test_table_layout_and_list_input():
    attn = np.stack([stack(previous_pattern(4), uniform_causal(4))[0]] * 3)  # (3, 2, 4, 4)
    table = hs.head_stats_table(attn.tolist())
    assert list(table.columns) == [
        "layer",
        "head",
        "previous_token",
        "first_token",
        "distance",
        "entropy",
        "label",
    ]
    assert len(table) == 6
    assert table["layer"].tolist() == [0, 0, 1, 1, 2, 2]
    assert table["head"].tolist() == [0, 1, 0, 1, 0, 1]


def test_induction_probe_is_one_setting_for_the_app_and_the_card():
    """#20 item 15: ``induction_probe`` averages ``INDUCTION_SEQUENCES`` blocks of
    ``INDUCTION_PERIOD`` tokens repeated twice; a perfect induction head scores 1, a
    context too short for a repeated block gives NaN."""
    from inference import head_stats as hs

    seen = []

    def perfect(ids):  # (1, 1, T, T): query i looks at i - period + 1 once past the block
        seen.append(len(ids))
        t, period = len(ids), len(ids) // 2
        attn = np.zeros((1, 1, t, t))
        for i in range(t):
            attn[0, 0, i, i - period + 1 if period and i >= period else 0] = 1.0
        return attn

    score = hs.induction_probe(perfect, list(range(100)), context_length=256)
    assert score.shape == (1, 1) and score[0, 0] == 1.0
    assert seen == [2 * hs.INDUCTION_PERIOD] * hs.INDUCTION_SEQUENCES
    seen.clear()
    assert np.isnan(hs.induction_probe(perfect, [1, 2, 3], context_length=3)).all()
