"""What a foreign graph's inputs are told to be, and what each is fed (no graph is run)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from upload.onnx_inputs import graph_inputs, pad_token

SPEC = {"kind": "bpe", "vocab": {"a": 0, "b": 1, "<|endoftext|>": 2}, "special": ["<|endoftext|>"]}


def graph(*inputs: tuple[str, int, list]) -> onnx.ModelProto:
    """A model whose graph declares ``inputs`` (name, element type, dims); no nodes needed."""
    values = [helper.make_tensor_value_info(n, t, d) for n, t, d in inputs]
    out = helper.make_tensor_value_info("logits", TensorProto.FLOAT, None)
    return helper.make_model(helper.make_graph([], "g", values, [out]))


def test_pad_token_prefers_pad_then_end_of_text_then_id_0():
    assert pad_token(SPEC) == (2, "<|endoftext|>")
    with_pad = {
        **SPEC,
        "vocab": {**SPEC["vocab"], "<pad>": 3},
        "special": ["<|endoftext|>", "<pad>"],
    }
    assert pad_token(with_pad) == (3, "<pad>")
    assert pad_token({"kind": "char", "stoi": {"\n": 0, "a": 1}}) == (0, "\n")
    assert pad_token({"kind": "wordpiece", "vocab": {"[UNK]": 0, "[PAD]": 1}}) == (1, "[PAD]")


def test_each_input_is_fed_what_one_padded_sentence_needs():
    i64, f32 = TensorProto.INT64, TensorProto.FLOAT
    inputs = graph_inputs(
        graph(
            ("input_ids", i64, [1, 5]),
            ("attention_mask", f32, ["batch", 5]),
            ("position_ids", i64, [5]),
            ("token_type_ids", i64, [1, 5]),
            ("past_key_values.0.key", f32, ["batch", 4, "past", 8]),
        ),
        "m.onnx",
        SPEC,
    )
    assert inputs.fixed_T == 5 and inputs.mask.name == "attention_mask"
    feed = inputs.feed([0, 1, 1])
    np.testing.assert_array_equal(feed["input_ids"], [[0, 1, 1, 2, 2]])  # padded with id 2
    np.testing.assert_array_equal(feed["attention_mask"], [[1, 1, 1, 0, 0]])
    assert feed["attention_mask"].dtype == np.float32
    np.testing.assert_array_equal(feed["position_ids"], [0, 1, 2, 3, 4])
    np.testing.assert_array_equal(feed["token_type_ids"], [[0, 0, 0, 0, 0]])
    assert feed["past_key_values.0.key"].shape == (1, 4, 0, 8)  # an empty past
    assert inputs.fed_note() == (
        "Fed with the token ids (input_ids): attention_mask = 1 for every token; "
        "position_ids = 0 … T−1; token_type_ids = 0; an empty past (past_key_values.0.key, "
        "length 0)."
    )


@pytest.mark.parametrize(
    "inputs, message",
    [
        ([("ids", 7, [1, "T"]), ("mask", 7, [1, 4])], None),
        ([("ids", 7, [1, 3]), ("attention_mask", 7, [1, 4])], "different fixed lengths"),
        (
            [("ids", 7, [1, "T"]), ("past_key_values.0.key", 1, [1, 4, "P", "D"])],
            "exactly one dynamic",
        ),
        ([("ids", 7, [1, 2, "T"])], "is not of shape \\(batch, T\\) or \\(T\\)"),
        ([("embeddings", 1, [1, "T", 8])], "its input 'embeddings' \\(float32\\) is not one"),
        ([("a", 7, [1, "T"]), ("b", 6, [1, "T"])], "found 2 \\(a, b\\)"),
    ],
)
def test_inputs_the_app_cannot_feed_are_refused_in_one_line(inputs, message):
    model = graph(*inputs)
    if message is None:  # a mask of a fixed 4 tokens fixes the sentence length
        assert graph_inputs(model, "m.onnx", SPEC).fixed_T == 4
        return
    with pytest.raises(ValueError, match=f"^m.onnx: .*{message}"):
        graph_inputs(model, "m.onnx", SPEC)
