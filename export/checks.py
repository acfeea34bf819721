"""Checks of an exported ONNX graph: valid, self-contained, its sequence axis still
symbolic (the exporter can silently freeze it to the example's length), and which tensors
hold the sequence axis twice (a T x T tensor, which the linear fast graph must not have).
"""

from __future__ import annotations

from pathlib import Path

import onnx

from models import contract


def check_graph(path: Path, symbolic_inputs: dict[str, int] | None = None) -> onnx.ModelProto:
    """Validate an exported graph and return it.

    Args:
        path: the ``.onnx`` file.
        symbolic_inputs: input name -> axis that must be a symbolic dimension.

    Raises:
        ValueError: if the graph fails ``onnx.checker``, references external
            data, or an axis that must be dynamic was frozen to a number.
    """
    model = onnx.load(str(path), load_external_data=False)
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception as exc:  # onnx raises several checker error types
        raise ValueError(f"{path.name}: onnx.checker failed: {exc}") from exc
    for tensor in model.graph.initializer:
        if tensor.data_location == onnx.TensorProto.EXTERNAL:
            raise ValueError(f"{path.name}: initializer {tensor.name} uses external data")
    for name, axis in (symbolic_inputs or {}).items():
        inputs = {i.name: i for i in model.graph.input}
        dim = inputs[name].type.tensor_type.shape.dim[axis]
        if not dim.dim_param or dim.HasField("dim_value"):
            raise ValueError(f"{path.name}: input {name} axis {axis} was frozen to {dim.dim_value}")
    return model


def square_sequence_tensors(model: onnx.ModelProto) -> list[str]:
    """Names of the tensors whose inferred shape has the sequence axis twice (T x T).

    Runs ``onnx.shape_inference`` (strict, with data propagation) on a copy of
    ``model``; the sequence axis is the symbolic axis 1 of input ``input_ids``.

    Raises:
        ValueError: if inference fails, the input has no symbolic axis, or a tensor
            is left without a full shape or with a symbolic size other than T (a
            T x T tensor could hide there).
    """
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
    except Exception as exc:  # onnx raises several inference error types
        raise ValueError(f"shape inference failed: {exc}") from exc
    graph = inferred.graph
    inputs = {i.name: i for i in graph.input}
    if contract.INPUT_NAME not in inputs:
        raise ValueError(f"graph has no input {contract.INPUT_NAME!r}")
    seq = inputs[contract.INPUT_NAME].type.tensor_type.shape.dim[1].dim_param
    if not seq:
        raise ValueError("the sequence axis of input_ids is not symbolic")
    values = {v.name: v for v in [*graph.input, *graph.value_info, *graph.output]}
    square = []
    for name in [o for node in graph.node for o in node.output if o] + [
        o.name for o in graph.output
    ]:
        tensor = values[name].type.tensor_type if name in values else None
        if tensor is None or not tensor.HasField("shape"):
            raise ValueError(f"tensor {name!r} has no inferred shape")
        params = [d.dim_param for d in tensor.shape.dim if not d.HasField("dim_value")]
        if any(p != seq for p in params):
            raise ValueError(f"tensor {name!r} has symbolic sizes {params}, expected only {seq}")
        if len(params) >= 2:
            square.append(name)
    return sorted(set(square))
