"""Hostile ONNX graphs, built from a real exported graph: each hides external data,
lies about its sizes in its metadata, or computes something the app must not run."""

from __future__ import annotations

import json

import numpy as np
import onnx
from onnx import helper, numpy_helper


def copy(model: onnx.ModelProto) -> onnx.ModelProto:
    """A deep copy of ``model``."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    return out


def _external_tensor(name: str, location: str) -> onnx.TensorProto:
    tensor = helper.make_tensor(name, onnx.TensorProto.FLOAT, [16], [0.0] * 16)
    tensor.ClearField("float_data")
    tensor.data_location = onnx.TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", "0"), ("length", "64")):
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value
    return tensor


def _graph(name: str, tensor: onnx.TensorProto, initializer: bool = False) -> onnx.GraphProto:
    """A one-output graph returning ``tensor`` (as a Constant node, or an initializer)."""
    out = helper.make_tensor_value_info(tensor.name, onnx.TensorProto.FLOAT, [16])
    if initializer:
        node = helper.make_node("Identity", [tensor.name], [tensor.name + "_id"])
        out = helper.make_tensor_value_info(tensor.name + "_id", onnx.TensorProto.FLOAT, [16])
        return helper.make_graph([node], name, [], [out], initializer=[tensor])
    return helper.make_graph(
        [helper.make_node("Constant", [], [tensor.name], value=tensor)], name, [], [out]
    )


def external_elsewhere(model: onnx.ModelProto, where: str, location: str) -> onnx.ModelProto:
    """A copy with an external-data tensor hidden ``where``:

    * "function If branch": in a FunctionProto whose If node's then-branch holds a
      Constant pointing at ``location`` (and a node in the main graph calls the function);
    * "function attribute default": a FunctionProto attribute default (attribute_proto);
    * "training_info": a training_info initialization graph's initializer;
    * "sparse_initializer": the values of a sparse initializer;
    * "sparse attribute": a Constant node's sparse_value.
    """
    bad = copy(model)
    leak = _external_tensor("leak", location)
    if where in ("function If branch", "function attribute default"):
        zeros = helper.make_tensor("zero", onnx.TensorProto.FLOAT, [16], [0.0] * 16)
        body = [
            helper.make_node(
                "If", ["cond"], ["out"],
                then_branch=_graph("then", leak) if where == "function If branch" else _graph("then", zeros),
                else_branch=_graph("else", zeros),
            )
        ]  # fmt: skip
        fn = helper.make_function(
            "local.hide", "Hide", ["cond"], ["out"], body, [helper.make_opsetid("", 18)]
        )
        if where == "function attribute default":
            fn.attribute_proto.append(helper.make_attribute("w", leak))
        bad.functions.append(fn)
        bad.opset_import.append(helper.make_opsetid("local.hide", 1))
        cond = helper.make_tensor("cond_value", onnx.TensorProto.BOOL, [], [True])
        bad.graph.node.extend(
            [
                helper.make_node("Constant", [], ["hide_cond"], value=cond),
                helper.make_node("Hide", ["hide_cond"], ["hidden"], domain="local.hide"),
            ]
        )
    elif where == "training_info":
        bad.training_info.add().initialization.CopyFrom(_graph("init", leak, initializer=True))
    elif where == "sparse_initializer":
        sparse = bad.graph.sparse_initializer.add()
        sparse.values.CopyFrom(leak)
        sparse.indices.CopyFrom(
            helper.make_tensor("leak_idx", onnx.TensorProto.INT64, [16], list(range(16)))
        )
        sparse.dims.extend([16])
    elif where == "sparse attribute":
        sparse = helper.make_sparse_tensor(
            leak, helper.make_tensor("idx", onnx.TensorProto.INT64, [16], list(range(16))), [16]
        )
        bad.graph.node.append(helper.make_node("Constant", [], ["leak_out"], sparse_value=sparse))
    else:
        raise ValueError(where)
    return bad


def with_config(model: onnx.ModelProto, **changes) -> onnx.ModelProto:
    """A copy whose ``config`` metadata has ``changes`` applied (the graph is unchanged)."""
    bad = copy(model)
    for prop in bad.metadata_props:
        if prop.key == "config":
            cfg = {k: v for k, v in json.loads(prop.value).items() if k != "d_head"}
            prop.value = json.dumps({**cfg, **changes})
    return bad


def with_metadata(model: onnx.ModelProto, key: str, value: str) -> onnx.ModelProto:
    """A copy whose metadata ``key`` is ``value``."""
    bad = copy(model)
    next(p for p in bad.metadata_props if p.key == key).value = value
    return bad


def with_node(model: onnx.ModelProto, node: onnx.NodeProto) -> onnx.ModelProto:
    """A copy with ``node`` appended to the main graph (not wired to any output)."""
    bad = copy(model)
    bad.graph.node.append(node)
    return bad


def nan_initializer(model: onnx.ModelProto) -> tuple[onnx.ModelProto, str]:
    """A copy with one NaN in its first float weight matrix; returns (model, its name)."""
    bad = copy(model)
    tensor = next(
        t
        for t in bad.graph.initializer
        if t.data_type == onnx.TensorProto.FLOAT and len(t.dims) == 2
    )
    values = numpy_helper.to_array(tensor).copy()
    values.flat[3] = np.nan
    tensor.CopyFrom(numpy_helper.from_array(values, tensor.name))
    return bad, tensor.name


def rewire_output(model: onnx.ModelProto, name: str, build) -> onnx.ModelProto:
    """A copy whose output ``name`` is recomputed from its original value.

    ``build(original, name)`` returns (nodes, initializers) that compute ``name`` from
    ``original``; the output's declared dims become symbolic, so only running it tells.
    """
    bad = copy(model)
    original = name + "_original"
    for node in bad.graph.node:
        for i, o in enumerate(node.output):
            if o == name:
                node.output[i] = original
        for i, o in enumerate(node.input):
            if o == name:
                node.input[i] = original
    nodes, initializers = build(original, name)
    bad.graph.node.extend(nodes)
    bad.graph.initializer.extend(initializers)
    shape = next(o for o in bad.graph.output if o.name == name).type.tensor_type.shape
    for i, dim in enumerate(shape.dim):
        dim.Clear()
        dim.dim_param = f"{name}_{i}"
    return bad


def _scalar(name: str, value: float) -> onnx.TensorProto:
    return helper.make_tensor(name, onnx.TensorProto.FLOAT, [], [value])


def add_nan(original: str, name: str):
    """Builder for :func:`rewire_output`: ``name = original + 0 / 0`` (NaN computed at run time)."""
    nodes = [
        helper.make_node("Div", ["h_zero", "h_zero"], ["h_nan"]),
        helper.make_node("Add", [original, "h_nan"], [name]),
    ]
    return nodes, [_scalar("h_zero", 0.0)]


def doubled_first_axis(original: str, name: str):
    """Builder for :func:`rewire_output`: ``name = concat([original, original], axis=0)``."""
    return [helper.make_node("Concat", [original, original], [name], axis=0)], []


def allocate(shape: list[int]):
    """Builder for :func:`rewire_output`: ``name = original + 0 * sum(zeros(shape))``,
    i.e. the graph asks onnxruntime for prod(shape) float32 values."""

    def build(original: str, name: str):
        nodes = [
            helper.make_node("ConstantOfShape", ["h_shape"], ["h_big"]),
            helper.make_node("ReduceSum", ["h_big"], ["h_sum"], keepdims=0),
            helper.make_node("Mul", ["h_sum", "h_zero"], ["h_nothing"]),
            helper.make_node("Add", [original, "h_nothing"], [name]),
        ]
        shape_tensor = helper.make_tensor("h_shape", onnx.TensorProto.INT64, [len(shape)], shape)
        return nodes, [shape_tensor, _scalar("h_zero", 0.0)]

    return build


def slow(n: int = 2048, repeats: int = 60):
    """Builder for :func:`rewire_output`: ``repeats`` chained (n x n) MatMuls (minutes of
    CPU in 64 MB), added to the output times zero."""

    def build(original: str, name: str):
        nodes = [helper.make_node("ConstantOfShape", ["h_shape"], ["h_m0"])]
        for i in range(repeats):
            nodes.append(helper.make_node("MatMul", [f"h_m{i}", "h_m0"], [f"h_m{i + 1}"]))
        nodes += [
            helper.make_node("ReduceSum", [f"h_m{repeats}"], ["h_sum"], keepdims=0),
            helper.make_node("Mul", ["h_sum", "h_zero"], ["h_nothing"]),
            helper.make_node("Add", [original, "h_nothing"], [name]),
        ]
        shape_tensor = helper.make_tensor("h_shape", onnx.TensorProto.INT64, [2], [n, n])
        return nodes, [shape_tensor, _scalar("h_zero", 0.0)]

    return build


def fails_on_token(token_id: int, input_name: str = "input_ids"):
    """Builder for :func:`rewire_output` on ``logits``: a Reshape that fails whenever
    the input ``input_name`` contains ``token_id``, and is the identity otherwise."""

    def build(original: str, name: str):
        nodes = [
            helper.make_node("Equal", [input_name, "h_token"], ["h_eq"]),
            helper.make_node("Cast", ["h_eq"], ["h_eq_int"], to=onnx.TensorProto.INT64),
            helper.make_node("ReduceMax", ["h_eq_int"], ["h_any_int"], keepdims=0),
            helper.make_node("Cast", ["h_any_int"], ["h_any"], to=onnx.TensorProto.BOOL),
            helper.make_node("Shape", [original], ["h_shape"]),
            helper.make_node("Where", ["h_any", "h_bad_shape", "h_shape"], ["h_new_shape"]),
            helper.make_node("Reshape", [original, "h_new_shape"], [name]),
        ]
        return nodes, [
            helper.make_tensor("h_token", onnx.TensorProto.INT64, [], [token_id]),
            helper.make_tensor("h_bad_shape", onnx.TensorProto.INT64, [3], [1, 1, 1]),
        ]

    return build


def allocate_by_token_value(original: str, name: str):
    """Builder for :func:`rewire_output`: a ConstantOfShape sized by the largest token id
    (times 2**20), i.e. by the sentence's content rather than its length."""
    nodes = [
        helper.make_node("ReduceMax", ["input_ids"], ["h_top"], keepdims=0),
        helper.make_node("Mul", ["h_top", "h_mega"], ["h_n"]),
        helper.make_node("Unsqueeze", ["h_n", "h_axis"], ["h_shape"]),
        helper.make_node("ConstantOfShape", ["h_shape"], ["h_big"]),
        helper.make_node("ReduceSum", ["h_big"], ["h_sum"], keepdims=0),
        helper.make_node("Mul", ["h_sum", "h_zero"], ["h_nothing"]),
        helper.make_node("Add", [original, "h_nothing"], [name]),
    ]
    return nodes, [
        helper.make_tensor("h_mega", onnx.TensorProto.INT64, [], [2**20]),
        helper.make_tensor("h_axis", onnx.TensorProto.INT64, [1], [0]),
        _scalar("h_zero", 0.0),
    ]


def allocate_at_length(length: int, values: int = 2**30):
    """Builder for :func:`rewire_output`: only when the sentence has ``length`` tokens,
    the graph asks for ``values`` float32 values (4 GiB by default); at every other
    length, for one. Sizes follow the sentence's *length* (through Shape), which the
    static checks allow, and the trial lengths (3 and the context) look harmless."""

    def build(original: str, name: str):
        i64 = onnx.TensorProto.INT64
        nodes = [
            helper.make_node("Shape", [original], ["h_shape"]),
            helper.make_node("Gather", ["h_shape", "h_one"], ["h_T"], axis=0),
            helper.make_node("Equal", ["h_T", "h_length"], ["h_hit"]),
            helper.make_node("Cast", ["h_hit"], ["h_hit64"], to=i64),
            helper.make_node("Mul", ["h_hit64", "h_values"], ["h_n"]),
            helper.make_node("Add", ["h_n", "h_one"], ["h_size"]),
            helper.make_node("Unsqueeze", ["h_size", "h_axes"], ["h_dims"]),
            helper.make_node("ConstantOfShape", ["h_dims"], ["h_big"]),
            helper.make_node("ReduceSum", ["h_big"], ["h_sum"], keepdims=0),
            helper.make_node("Mul", ["h_sum", "h_zero"], ["h_nothing"]),
            helper.make_node("Add", [original, "h_nothing"], [name]),
        ]
        constants = [
            helper.make_tensor("h_one", i64, [], [1]),
            helper.make_tensor("h_length", i64, [], [length]),
            helper.make_tensor("h_values", i64, [], [values - 1]),
            helper.make_tensor("h_axes", i64, [1], [0]),
            _scalar("h_zero", 0.0),
        ]
        return nodes, constants

    return build


def _plus_nothing(original: str, name: str, value: str) -> list[onnx.NodeProto]:
    """Nodes adding ``0 * sum(value)`` to ``original`` as ``name``: the graph must compute
    ``value``, and the output does not change."""
    return [
        helper.make_node("Cast", [value], ["h_value_f"], to=onnx.TensorProto.FLOAT),
        helper.make_node("ReduceSum", ["h_value_f"], ["h_sum"], keepdims=0),
        helper.make_node("Mul", ["h_sum", "h_zero"], ["h_nothing"]),
        helper.make_node("Add", [original, "h_nothing"], [name]),
    ]


def gather_nd_by_token(rows: int, input_name: str = "input_ids"):
    """Builder for :func:`rewire_output`: GatherND picks rows of a (rows, 4) table by the
    token ids (1, T, 1): a token id >= ``rows`` is an index out of range."""

    def build(original: str, name: str):
        nodes = [
            helper.make_node("Unsqueeze", [input_name, "h_last"], ["h_index"]),
            helper.make_node("GatherND", ["h_table", "h_index"], ["h_rows"]),
            *_plus_nothing(original, name, "h_rows"),
        ]
        table = helper.make_tensor("h_table", onnx.TensorProto.FLOAT, [rows, 4], [0.0] * rows * 4)
        last = helper.make_tensor("h_last", onnx.TensorProto.INT64, [1], [-1])
        return nodes, [table, last, _scalar("h_zero", 0.0)]

    return build


def gather_nd_huge(shape: list[int]):
    """Builder for :func:`rewire_output`: GatherND with indices expanded to ``shape`` + [1]
    (all zeros) over a (1, 1024) table: an output of prod(shape) * 1024 float32 values,
    its size set by constants only (nothing static gives it away)."""

    def build(original: str, name: str):
        i64 = onnx.TensorProto.INT64
        nodes = [
            helper.make_node("Expand", ["h_zero_index", "h_shape"], ["h_index"]),
            helper.make_node("GatherND", ["h_table", "h_index"], ["h_rows"]),
            *_plus_nothing(original, name, "h_rows"),
        ]
        return nodes, [
            helper.make_tensor("h_table", onnx.TensorProto.FLOAT, [1, 1024], [0.0] * 1024),
            helper.make_tensor("h_zero_index", i64, [1], [0]),
            helper.make_tensor("h_shape", i64, [len(shape) + 1], [*shape, 1]),
            _scalar("h_zero", 0.0),
        ]

    return build


def size_through_isnan(input_name: str = "input_ids"):
    """Builder for :func:`rewire_output`: a ConstantOfShape sized by IsNaN of the token
    ids (as floats) summed, plus 2**20: a size that follows the input's values."""

    def build(original: str, name: str):
        i64 = onnx.TensorProto.INT64
        nodes = [
            helper.make_node("Cast", [input_name], ["h_ids_f"], to=onnx.TensorProto.FLOAT),
            helper.make_node("IsNaN", ["h_ids_f"], ["h_nan"]),
            helper.make_node("Cast", ["h_nan"], ["h_nan_i"], to=i64),
            helper.make_node("ReduceSum", ["h_nan_i"], ["h_n0"], keepdims=1),
            helper.make_node("Add", ["h_n0", "h_mega"], ["h_n"]),
            helper.make_node("Reshape", ["h_n", "h_axis"], ["h_shape"]),
            helper.make_node("ConstantOfShape", ["h_shape"], ["h_big"]),
            *_plus_nothing(original, name, "h_big"),
        ]
        return nodes, [
            helper.make_tensor("h_mega", i64, [], [2**20]),
            helper.make_tensor("h_axis", i64, [1], [1]),
            _scalar("h_zero", 0.0),
        ]

    return build


def nan_where_isnan(input_name: str = "input_ids"):
    """Builder for :func:`rewire_output`: ``name = original + Where(IsNaN(ids), 0, NaN)``
    (IsNaN of integer ids is always false: NaN reaches every logit at run time)."""

    def build(original: str, name: str):
        nodes = [
            helper.make_node("Cast", [input_name], ["h_ids_f"], to=onnx.TensorProto.FLOAT),
            helper.make_node("IsNaN", ["h_ids_f"], ["h_nan"]),
            helper.make_node("Div", ["h_zero", "h_zero"], ["h_nan_value"]),
            helper.make_node("Where", ["h_nan", "h_zero", "h_nan_value"], ["h_poison"]),
            helper.make_node("Unsqueeze", ["h_poison", "h_last"], ["h_poison3"]),
            helper.make_node("Add", [original, "h_poison3"], [name]),
        ]
        last = helper.make_tensor("h_last", onnx.TensorProto.INT64, [1], [-1])
        return nodes, [_scalar("h_zero", 0.0), last]

    return build
