"""Count an ONNX file's parts on the protobuf wire, before the protobuf library parses it.

Parsing is where a crafted file hurts first: a file at the size cap made of millions of
empty nodes costs gigabytes as Python protobuf objects before any check can run. This
scan reads only the varint keys and lengths of the messages that can repeat (graphs,
nodes, attributes, functions, training graphs), skips every other field without
decoding it, and stops as soon as the budget is spent, so its cost is bounded by
``MAX_ONNX_PARTS`` whatever the file holds. Field numbers are those of onnx.proto.
"""

from __future__ import annotations

from upload.errors import UploadError
from upload.limits import MAX_ONNX_NODES, MAX_ONNX_PARTS

# message -> {field number: message type of that (length-delimited) field}
_SCHEMA = {
    "model": {7: "graph", 20: "training", 25: "function"},
    "graph": {1: "node"},
    "node": {5: "attribute"},
    "attribute": {6: "graph", 11: "graph"},
    "function": {7: "node"},
    "training": {1: "graph", 2: "graph"},
}
_COUNTED = ("graph", "node", "attribute", "function", "training")


class _Budget:
    def __init__(self, name: str):
        self.name, self.parts, self.nodes, self.graphs = name, 0, 0, 0

    def spend(self, kind: str) -> None:
        self.parts += 1
        self.nodes += kind == "node"
        if self.parts > MAX_ONNX_PARTS or self.nodes > MAX_ONNX_NODES:
            raise UploadError(
                f"{self.name}: refused: the model has more than {MAX_ONNX_NODES:,} nodes or "
                f"{MAX_ONNX_PARTS:,} parts; graphs exported here have a few thousand"
            )


def _varint(data: bytes, pos: int, end: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= end or shift > 63:
            raise ValueError("bad varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def _scan(data: bytes, pos: int, end: int, kind: str, budget: _Budget, depth: int) -> None:
    if depth > 16:
        raise UploadError(f"{budget.name}: refused: subgraphs nested more than 16 deep")
    children = _SCHEMA.get(kind, {})
    while pos < end:
        key, pos = _varint(data, pos, end)
        field, wire = key >> 3, key & 7
        if kind in _COUNTED:
            budget.spend("part")
        if wire == 0:
            _, pos = _varint(data, pos, end)
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        elif wire == 2:
            length, pos = _varint(data, pos, end)
            if pos + length > end:
                raise ValueError("field runs past the end")
            child = children.get(field)
            if child is not None:
                budget.graphs += kind == "model" and child == "graph"
                if child == "node":
                    budget.spend("node")
                _scan(data, pos, pos + length, child, budget, depth + 1)
            pos += length
        else:
            raise ValueError(f"wire type {wire}")
    if pos != end:
        raise ValueError("field runs past the end")


def check_wire(name: str, data: bytes) -> bool:
    """Refuse an ONNX file with too many nodes or parts, or a damaged encoding, unparsed.

    Returns:
        True if the bytes are a well-formed protobuf with a graph and at least one node
        (an ONNX model, as far as the wire tells), False if they are well formed but not.

    Raises:
        UploadError: "refused: the model has more than 20,000 nodes ..." or
            "truncated or corrupt (not a readable ONNX file)".
    """
    budget = _Budget(name)
    try:
        _scan(data, 0, len(data), "model", budget, 0)
    except UploadError:
        raise
    except (ValueError, IndexError):
        raise UploadError(f"{name}: truncated or corrupt (not a readable ONNX file)") from None
    return budget.graphs == 1 and budget.nodes > 0
