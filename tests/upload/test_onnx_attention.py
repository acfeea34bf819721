"""Finding a foreign graph's attention: which outputs are (…, T, T) over the key axis, which
are logits, and instrumenting a graph without changing what it computes."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from tests.helpers.foreign_lm import export, reference, tiny_lm
from upload.errors import UploadError
from upload.onnx_attention import Candidate, classify, instrument, is_logits, not_found_line

LENGTHS = [3, 5]


def softmax(axis: int = -1, old: bool = False) -> Candidate:
    return Candidate("Softmax", "p", "s", axis, old)


@pytest.mark.parametrize(
    ("candidate", "shapes", "attention"),
    [
        (softmax(), [(1, 4, 3, 3), (1, 4, 5, 5)], True),  # (B, H, T, T)
        (softmax(), [(4, 3, 3), (4, 5, 5)], True),  # (B·H, T, T)
        (softmax(3), [(1, 4, 3, 3), (1, 4, 5, 5)], True),
        (softmax(2), [(1, 4, 3, 3), (1, 4, 5, 5)], False),  # over the query axis
        (softmax(1, old=True), [(1, 4, 3, 3), (1, 4, 5, 5)], False),  # opset < 13 default
        (softmax(), [(1, 3, 32), (1, 5, 32)], False),  # over channels
        (softmax(), [(1, 3, 3), (1, 5, 5)], True),  # one head
        (softmax(), [(1, 3, 30), (1, 5, 30)], False),  # over the vocabulary
        (softmax(), [(3, 3, 3), (5, 5, 5)], False),  # the axis before (T, T) moves with T
        (Candidate("Attention", "p", None, None), [(1, 2, 3, 3), (1, 2, 5, 5)], True),
    ],
)
def test_attention_is_t_by_t_over_the_key_axis_on_both_lengths(candidate, shapes, attention):
    found = classify([candidate], {"p": shapes}, LENGTHS)
    assert (found.attention == [candidate]) == attention
    assert found.n_head == (int(np.prod(shapes[0][:-2])) if attention else 0)


def test_layers_must_have_one_head_count_and_the_refusal_says_what_was_found():
    a, b = Candidate("Softmax", "a", "sa", -1), Candidate("Softmax", "b", "sb", -1)
    shapes = {"a": [(1, 4, 3, 3), (1, 4, 5, 5)], "b": [(1, 2, 3, 3), (1, 2, 5, 5)]}
    with pytest.raises(UploadError, match=r"different numbers of heads \(\[4, 2\]\)"):
        classify([a, b], shapes, LENGTHS)
    found = classify([a], {"a": [(1, 3, 30), (1, 5, 30)]}, LENGTHS)
    assert not_found_line("m.onnx", found).endswith(
        "found 0 (1 Softmax node(s) of other shapes, e.g. (1, 3, 30))"
    )
    assert not_found_line("m.onnx", classify([], {}, LENGTHS)).endswith(
        "found 0 (the graph has no Softmax or Attention node)"
    )


def test_logits_are_t_by_v_with_a_batch_of_one():
    assert is_logits([(1, 3, 30), (1, 5, 30)], LENGTHS)
    assert is_logits([(3, 30), (5, 30)], LENGTHS)
    assert not is_logits([(1, 4, 3, 8), (1, 4, 5, 8)], LENGTHS)  # keys of 4 heads
    assert not is_logits([(1, 3, 3), (1, 5, 5)], LENGTHS)  # V moves with T
    assert not is_logits([(1, 30), (1, 30)], LENGTHS)


def test_an_attention_output_the_graph_uses_itself_is_left_as_it_was():
    """A graph that already returns an Attention node's qk output (mode 0: QKᵀ scaled)
    keeps returning it; the probabilities come from a copy of the node."""
    model = tiny_lm(30, "sdpa", seed=7)
    proto = onnx.load_from_string(export(model, opset=23))
    node = next(n for n in proto.graph.node if n.op_type == "Attention")
    while len(node.output) < 4:
        node.output.append("")
    node.output[3] = "own_qk"
    proto.graph.output.append(onnx.helper.make_tensor_value_info("own_qk", 1, None))
    instrumented, found = instrument(proto)
    ids = np.array([[1, 2, 3, 4, 5]], np.int64)

    def run(graph):
        data = graph.SerializeToString()
        session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
        names = [o.name for o in session.get_outputs()]
        return dict(zip(names, session.run(None, {"idx": ids}), strict=True))

    before, after = run(proto), run(instrumented)
    np.testing.assert_array_equal(before["own_qk"], after["own_qk"])
    np.testing.assert_array_equal(before["logits"], after["logits"])
    probs = np.concatenate([after[c.probs] for c in found])  # (L, H, T, T)
    np.testing.assert_allclose(probs, reference(model, ids[0].tolist())[1], atol=1e-5, rtol=0)
