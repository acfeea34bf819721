"""Issue #50: a refusal by onnxruntime, onnx or torch while an upload is read is one line
of ours (the file, what to do); the library's own text (onnxruntime's names its C++
source files) goes to the server's log only.

Real workers, real onnxruntime: the graphs are the shipped softmax inspect graph with
10,000 nodes added that onnxruntime refuses to open, with an IR version this
onnxruntime does not know, and with one output written twice (onnx's checker).
"""

from __future__ import annotations

import logging

import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper

from tests.helpers import ROOT
from upload.errors import UploadError
from upload.load import load_upload
from upload.worker import _one_line

SHIPPED = ROOT / "exported" / "softmax.inspect.onnx"
LIBRARY_TEXT = ("[ONNXRuntimeError]", "onnxruntime_src", ".cc:", "Type Error", "SSA", "Fail")


def _ten_thousand_mistyped_nodes() -> bytes:
    """The shipped graph and 10,000 Add nodes of an int64 and a float tensor."""
    model = onnx.load(SHIPPED)
    model.graph.initializer.append(helper.make_tensor("h_one", TensorProto.FLOAT, [], [1.0]))
    model.graph.node.extend(
        helper.make_node("Add", ["input_ids", "h_one"], [f"h_add{i}"]) for i in range(10_000)
    )
    return model.SerializeToString()


def _future_ir_version() -> bytes:
    """The newest IR version onnx's checker knows, where this onnxruntime does not know it
    (its refusal names a file of its own sources)."""
    model = onnx.load(SHIPPED)
    model.ir_version = onnx.IR_VERSION
    data = model.SerializeToString()
    try:
        onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"])
    except Exception:  # noqa: BLE001 - refused, as the test needs
        return data
    pytest.skip(f"onnxruntime {onnxruntime.__version__} opens IR version {onnx.IR_VERSION}")


def _output_written_twice() -> bytes:
    model = onnx.load(SHIPPED)
    model.graph.node.extend(
        helper.make_node("Identity", ["input_ids"], ["h_twice"]) for _ in range(2)
    )
    return model.SerializeToString()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("build", "ours", "theirs"),
    [
        (_ten_thousand_mistyped_nodes, "refused: onnxruntime", "Type Error"),
        (_future_ir_version, "refused: onnxruntime", "IR version"),
        (_output_written_twice, "not a valid ONNX model: onnx's checker", "SSA"),
    ],
)
def test_a_library_refusal_is_our_line_and_its_text_goes_to_the_log(build, ours, theirs, caplog):
    name = "big graph.inspect.onnx"
    with caplog.at_level(logging.WARNING, logger="attnviz.upload"):
        with pytest.raises(UploadError) as refused:
            load_upload({name: build()})
    line = str(refused.value)
    assert line.startswith(f"{name}: {ours}"), line
    assert "server's log" in line and ("export" in line or "check" in line), line
    assert not any(text in line for text in LIBRARY_TEXT), line
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert line in logged and theirs in logged, logged


def test_an_unexpected_library_error_is_named_not_quoted():
    exc = onnx.checker.ValidationError("/src/onnx/checker.cc:12 secret detail")
    line, detail = _one_line(exc, "open")
    assert "onnx raised ValidationError" in line and "server's log" in line
    assert "checker.cc" not in line and "checker.cc:12 secret detail" in detail
