"""An uploaded ONNX graph parsed and walked (worker side): the wire check, then protobuf,
then every message inside it (graphs, subgraphs, functions, training_info) generically,
so no pass of ``upload/onnx_checks.py`` or ``upload/onnx_fold.py`` misses a part."""

from __future__ import annotations

import onnx
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError, Message

from upload.errors import UploadError
from upload.limits import MAX_ONNX_PARTS
from upload.onnx_wire import check_wire

MAX_PARTS = MAX_ONNX_PARTS


def walk(message: Message, node: onnx.NodeProto | None = None):
    """(message, nearest enclosing node) for every protobuf message inside ``message``.

    Generic over the schema, so nothing is missed: graphs and subgraphs (If, Loop,
    Scan), FunctionProto bodies and attribute defaults, training_info graphs,
    sparse tensors. TensorProto is a leaf (it holds no other tensor).
    """
    for field, value in message.ListFields():
        if field.type != FieldDescriptor.TYPE_MESSAGE:
            continue
        for item in [value] if isinstance(value, Message) else value:
            owner = item if isinstance(item, onnx.NodeProto) else node
            yield item, owner
            if not isinstance(item, onnx.TensorProto):
                yield from walk(item, owner)


def tensors(model: onnx.ModelProto):
    """(tensor, label) for every TensorProto anywhere in the model."""
    for item, node in walk(model):
        if isinstance(item, onnx.TensorProto):
            owner = f"a constant of node '{node.name or node.op_type}'" if node else "unnamed"
            yield item, item.name or owner


def nodes(model: onnx.ModelProto):
    """Every NodeProto anywhere: graph, subgraphs, functions, training_info."""
    return (item for item, _ in walk(model) if isinstance(item, onnx.NodeProto))


def check_parts(name: str, model: onnx.ModelProto) -> None:
    """Bound the work of every later pass (each walks the whole model in Python)."""
    for count, _ in enumerate(walk(model)):
        if count >= MAX_PARTS:
            raise UploadError(
                f"{name}: refused: the model has more than {MAX_PARTS:,} parts (nodes, "
                "tensors, value descriptions); graphs exported here have a few thousand"
            )


def itemsize(data_type: int) -> int:
    try:
        return onnx.helper.tensor_dtype_to_np_dtype(data_type).itemsize
    except (KeyError, TypeError, ValueError):
        return 8


def parse_graph(name: str, data: bytes) -> onnx.ModelProto:
    """``data`` parsed as an ONNX model after its wire check (nodes and parts counted
    before protobuf allocates them); nothing else is checked.

    Raises:
        UploadError: "not an ONNX model" or "truncated or corrupt", naming the file.
    """
    if not check_wire(name, data):
        raise UploadError(f"{name}: not an ONNX model (it has no graph)")
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except (DecodeError, RuntimeWarning, ValueError):
        raise UploadError(f"{name}: truncated or corrupt (not a readable ONNX file)") from None
    return model
