"""Greedy decoding loops of ``inference/decode.py`` on real onnxruntime sessions."""

import pytest

from inference import decode
from inference.runtime import load_shipped


def test_recurrent_decoding_matches_the_runtime_generate(tiny_exports):
    linear = load_shipped(tiny_exports["linear"][1], "linear")
    new, ms = decode.recurrent(linear, [1, 2, 3], 6)
    assert new == linear.generate([1, 2, 3], 6)[0] and len(ms) == 6


def test_tokens_per_second_buckets():
    curve = decode.tokens_per_second([1.0] * 32, prompt_len=4, buckets=4)
    assert curve["length"] == [12, 20, 28, 36]
    assert curve["tokens_per_s"] == pytest.approx([1000.0] * 4)
