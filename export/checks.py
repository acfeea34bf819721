"""Checks of an exported ONNX graph: valid, self-contained, its sequence axis still
symbolic (the exporter can silently freeze it to the example's length), and which tensors
grow like T x T (which the linear fast graph must not have).
"""

from __future__ import annotations

from pathlib import Path

import onnx

from models import contract

# Element count growth T1 -> T2 above GROWTH x (T2 / T1) counts as T x T: linear growth
# gives at most T2 / T1, T x T (T2 / T1)^2 (4x at twice the length).
GROWTH = 1.5


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


def square_sequence_tensors(
    model: onnx.ModelProto, lengths: tuple[int, int] = (97, 194)
) -> list[str]:
    """Names of the tensors that grow like T x T: run at two sequence lengths
    (:func:`tensor_sizes`), the element count grows by more than ``GROWTH`` x (T2 / T1),
    where linear growth is T2 / T1 (padding to chunks included) and T x T (T2 / T1)².

    A run, not shape inference: the linear fast graph reshapes T into T / C chunks of
    C, sizes that symbolic shape inference cannot name.

    Raises:
        ValueError: as :func:`tensor_sizes`.
    """
    sizes = tensor_sizes(model, lengths)
    limit = GROWTH * lengths[1] / lengths[0]
    return sorted(n for n, (a, b) in sizes.items() if b / max(a, 1) > limit)


def tensor_sizes(model: onnx.ModelProto, lengths: tuple[int, int]) -> dict[str, tuple[int, int]]:
    """Element count of every node output of ``model`` at each of two sequence lengths.

    Every node output becomes a graph output and onnxruntime runs the graph (graph
    optimizations off, so no tensor is fused away) on token ids 0 of shape (1, T1) and
    (1, T2).

    Args:
        model: the graph, input ``input_ids`` (1, T).
        lengths: (T1, T2), both allowed by the model (a learned position table caps them
            at its context length); the defaults of the callers are no model size.

    Returns:
        name -> (elements at T1, elements at T2).

    Raises:
        ValueError: if a node output has no inferred element type (it could not be read
            back), or the graph fails to run at either length.
    """
    import numpy as np
    import onnxruntime as ort

    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    graph = onnx.shape_inference.infer_shapes(probe).graph
    types = {v.name: v.type.tensor_type.elem_type for v in [*graph.value_info, *graph.output]}
    outputs = {o.name for o in probe.graph.output}
    names = [o for node in probe.graph.node for o in node.output if o and o not in outputs]
    if missing := [n for n in names if not types.get(n)]:
        raise ValueError(f"no inferred type for {', '.join(missing[:5])}")
    probe.graph.output.extend(onnx.helper.make_tensor_value_info(n, types[n], None) for n in names)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 3
    session = ort.InferenceSession(probe.SerializeToString(), options, ["CPUExecutionProvider"])
    every = [o.name for o in session.get_outputs()]
    sizes = []
    for T in lengths:
        try:
            values = session.run(every, {contract.INPUT_NAME: np.zeros((1, T), np.int64)})
        except Exception as exc:  # onnxruntime raises its own error types
            raise ValueError(f"the graph does not run at T = {T}: {exc}") from exc
        sizes.append([int(np.size(v)) for v in values])
    return {n: (a, b) for n, a, b in zip(every, *sizes, strict=True)}


def probe_lengths(cfg) -> tuple[int, int]:
    """The two lengths :func:`export.checks.square_sequence_tensors` runs a graph of
    ``cfg`` at: 97 and 194 tokens (two and four chunks of 64), or half and all of a
    learned position table's context length."""
    if cfg.position_scheme != "learned":
        return 97, 194
    return max(1, cfg.context_length // 2), cfg.context_length
