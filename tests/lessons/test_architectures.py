"""lessons.architectures: the CNN / RNN / self-attention table of d2l.ai 11.6.2."""

from __future__ import annotations

import pytest

from lessons.architectures import layer_costs, path_length_cnn


def test_the_table_at_a_sentence_size():
    cnn, rnn, attn = layer_costs(n=16, d=128, k=3)
    assert (cnn["operations"], rnn["operations"], attn["operations"]) == (
        3 * 16 * 128**2,
        16 * 128**2,
        16**2 * 128,
    )
    assert [r["sequential operations"] for r in (cnn, rnn, attn)] == [1, 16, 1]
    assert [r["maximum path length"] for r in (cnn, rnn, attn)] == [8, 15, 1]
    assert attn["computation"] == "O(n²·d)" and rnn["sequential"] == "O(n)"


def test_self_attention_is_cheaper_than_an_rnn_only_while_n_is_below_d():
    below = layer_costs(n=64, d=128)
    above = layer_costs(n=256, d=128)
    assert below[2]["operations"] < below[1]["operations"]
    assert above[2]["operations"] > above[1]["operations"]


@pytest.mark.parametrize(
    ("n", "k", "layers"), [(1, 3, 0), (2, 3, 1), (3, 3, 1), (4, 3, 2), (9, 5, 2)]
)
def test_a_cnn_widens_its_view_by_k_minus_1_a_layer(n, k, layers):
    assert path_length_cnn(n, k) == layers


def test_bad_sizes_are_refused():
    with pytest.raises(ValueError, match="k >= 2"):
        path_length_cnn(4, 1)
    with pytest.raises(ValueError, match="d must be"):
        layer_costs(4, 0)
