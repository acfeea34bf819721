"""Static checks of an uploaded ONNX graph: nothing is resolved, opened or run here.

Order matters: the whole ModelProto is walked for external data *before*
``onnx.checker`` ever sees it (the checker resolves relative paths, and its
error message would tell a student whether a file exists on the server).
Then operator domains and an allow-list of operator types (no Loop, Scan or If:
nothing our exporter does not produce), declared sizes, NaN/inf in stored
tensors, the checker, sizes that depend on input values (only the sentence
length may set them), the ``config``/``tokenizer`` metadata and the inspection
contract (``upload/onnx_contract.py``). What a graph really computes is checked
afterwards by running it once in a fenced-in child (``upload.onnx_contract.run_trial``, in the worker).
"""

from __future__ import annotations

import math

import numpy as np
import onnx
from onnx import numpy_helper

from models.config import ModelConfig
from upload.errors import LibraryRefusal, UploadError
from upload.limits import MAX_ONNX_DIM, MAX_UPLOAD_BYTES
from upload.onnx_contract import check_contract
from upload.onnx_parse import check_parts, itemsize, nodes, parse_graph, tensors, walk
from upload.sizes import check_size
from upload.tokenizer_spec import read_metadata

MAX_INITIALIZER_BYTES = 2 * MAX_UPLOAD_BYTES  # varint-packed ints grow when decoded
STANDARD_DOMAINS = ("", "ai.onnx", "ai.onnx.ml")
# What torch.onnx.export (TorchScript and dynamo, opset 17 and 18) writes for Hugging Face
# GPT-2, GPT-Neo and Llama models beyond the lists below, listed from real exports
# (tests/helpers/hf_exports.py): the masks' NaN guard and the padding mask's gather.
HF_EXPORT_OPS = frozenset({"IsNaN", "GatherND"})
# The dynamo exporter at opset 23 writes a Llama's (Mistral's, Qwen2's) RMSNorm and rotary
# positions as these standard operators, which onnxruntime runs (at opset 24 it writes them
# as plain arithmetic; tests/upload/test_hf_exports.py exports both).
OPSET_23_OPS = frozenset({"RMSNormalization", "RotaryEmbedding"})
# Every operator export/graphs.py emits (checked against exported/*.onnx and tiny exports
# with learned positions, no biases, untied heads, GPT-2's GELU-new: Pow and Tanh)...
EXPORTER_OPS = (
    frozenset(
        "Add Cast Clip Concat Cos CumSum Div Erf Exp Expand Gather Greater LayerNormalization "
        "MatMul Mul Not Pow Range ReduceSum Reshape Shape Sin Slice Softmax Squeeze Tanh "
        "Transpose Trilu Unsqueeze Where".split()
    )
    | {"Identity"}  # the inspect graph's blocks.{l}.resid_post is blocks.{l+1}.resid_pre
    | {"ConstantOfShape", "Mod", "Neg", "Pad"}  # linear's fast graph: T padded to chunks
    | {"Reciprocal", "Sigmoid", "Sqrt", "Sub"}  # delta's step graph: beta, the L2 norms
)
# A delta (DeltaNet) model's inspect and fast graphs scan over the tokens (ONNX Scan, with
# Conv for its short convolution): control flow, which uploads never run. Its checkpoint
# uploads instead (the worker exports it itself).
SCAN_HINT = (
    "a loop over the tokens, as in a DeltaNet graph; upload the model's .safetensors "
    "checkpoint instead (the app exports it itself)"
)
# ...plus the plain tensor operators other exporters use for the same architecture.
# No control flow (If, Loop, Scan), no sequences, no random numbers, no custom domains.
ALLOWED_OPS = (
    EXPORTER_OPS
    | frozenset(
        "Abs And CastLike Ceil Constant ConstantOfShape Einsum Elu Equal "
        "Flatten Floor GatherElements Gelu Gemm GreaterOrEqual HardSigmoid Identity Less "
        "LessOrEqual Log LogSoftmax Max Mean Min Mod Neg Or Pow Reciprocal ReduceL2 ReduceMax "
        "ReduceMean ReduceMin ReduceProd Relu Sigmoid Sign Size Softplus Split Sqrt Sub Sum Tanh "
        "Tile Xor".split()
    )
    | {"Attention"}  # opset 23's, which torch.onnx.export emits for SDPA from opset 23 on
    | OPSET_23_OPS
    | HF_EXPORT_OPS
)
# Operator -> positions of the inputs that set its output's size (not just its values).
_SIZE_INPUTS = {
    "Range": (0, 1, 2), "ConstantOfShape": (0,), "Expand": (1,), "Tile": (1,), "Pad": (1,),
}  # fmt: skip
_FLOAT_TYPES = {
    getattr(onnx.TensorProto, t)
    for t in (
        "FLOAT FLOAT16 DOUBLE BFLOAT16 FLOAT8E4M3FN FLOAT8E4M3FNUZ FLOAT8E5M2 FLOAT8E5M2FNUZ".split()
    )
    if hasattr(onnx.TensorProto, t)
}


def _check_external_data(name: str, model: onnx.ModelProto) -> None:
    for t, label in tensors(model):
        if t.data_location == onnx.TensorProto.EXTERNAL or len(t.external_data):
            where = {e.key: e.value for e in t.external_data}.get("location", "?")
            raise UploadError(
                f"{name}: refused: tensor '{label}' points to an outside file ({where!r}); "
                "upload one self-contained .onnx file: python -m upload.convert "
                f"{name} --out converted/ folds its weights in"
            )


def _check_operators(name: str, model: onnx.ModelProto) -> None:
    local = {(f.domain, f.name) for f in model.functions}
    if any(node.op_type == "Scan" for node in nodes(model)):  # named first: say what to do
        raise UploadError(f"{name}: refused: it uses the operator 'Scan' ({SCAN_HINT})")
    for node in nodes(model):
        if node.domain not in STANDARD_DOMAINS and (node.domain, node.op_type) not in local:
            raise UploadError(
                f"{name}: refused: it uses the custom operator '{node.op_type}' from "
                f"'{node.domain}' (only standard ONNX operators are allowed)"
            )
        if (
            node.domain not in ("", "ai.onnx")
            or (node.domain, node.op_type) in local
            or node.op_type not in ALLOWED_OPS
        ):
            raise UploadError(
                f"{name}: refused: it uses the operator '{node.op_type}', which the app does "
                "not run for uploads (no control flow such as Loop, Scan or If, no local "
                "functions; export with export/graphs.py or use plain tensor operators)"
            )


def _check_value_dependent_sizes(name: str, model: onnx.ModelProto) -> None:
    """Sizes may depend on the inputs' shapes (the sentence length), never on their values.

    Taint flows from the graph inputs (token ids, position, state) through every node
    except Shape and Size; a tainted value may not set the size of a Range,
    ConstantOfShape, Expand or Tile output. So the trial run's token ids stand for
    every sentence of the same length.
    """
    init = {t.name for t in model.graph.initializer}
    tainted = {i.name for i in model.graph.input if i.name not in init}
    for node in model.graph.node:  # topologically sorted (onnx.checker enforces it)
        sizing = _SIZE_INPUTS.get(node.op_type, ())
        bad = [node.input[i] for i in sizing if i < len(node.input) and node.input[i] in tainted]
        if bad:
            raise UploadError(
                f"{name}: refused: the size of the {node.op_type} output '{node.output[0]}' "
                f"depends on the values of the inputs (through '{bad[0]}'); sizes may depend "
                "only on the length of the sentence"
            )
        if node.op_type not in ("Shape", "Size") and tainted.intersection(node.input):
            tainted.update(node.output)


def _check_sizes(name: str, model: onnx.ModelProto) -> None:
    """Declared tensor dims and bytes, and every declared value dimension."""
    total = 0
    for t, label in tensors(model):
        if any(d < 0 or d > MAX_ONNX_DIM**2 for d in t.dims):
            raise UploadError(f"{name}: refused: tensor '{label}' declares dims {list(t.dims)}")
        total += math.prod(t.dims) * itemsize(t.data_type)
    if total > MAX_INITIALIZER_BYTES:
        raise UploadError(
            f"{name}: refused: its weights declare {total / 2**20:.0f} MB "
            f"(limit {MAX_INITIALIZER_BYTES // 2**20} MB)"
        )
    for value, _ in walk(model):
        if not isinstance(value, onnx.ValueInfoProto):
            continue
        for d, _ in walk(value):
            if isinstance(d, onnx.TensorShapeProto.Dimension) and d.HasField("dim_value"):
                if not 0 <= d.dim_value <= MAX_ONNX_DIM:
                    raise UploadError(
                        f"{name}: refused: '{value.name}' declares a dimension of "
                        f"{d.dim_value} (limit {MAX_ONNX_DIM})"
                    )


def _check_finite(name: str, model: onnx.ModelProto) -> None:
    """NaN anywhere, or inf in a tensor of more than one value, in any stored float tensor.

    A single ±inf value is allowed: exporters store the causal mask's fill value as a
    scalar -inf constant (ours does). Runs after ``_check_sizes`` bounded the bytes.
    """
    for t, label in tensors(model):
        if t.data_type not in _FLOAT_TYPES:
            continue
        try:
            values = numpy_helper.to_array(t).astype(np.float32)
        except Exception:  # onnx raises ValueError and others when data and dims disagree
            raise UploadError(
                f"{name}: truncated or corrupt (tensor '{label}' does not hold the "
                f"{math.prod(t.dims)} values its dims declare)"
            ) from None
        if np.isnan(values).any() or (values.size > 1 and np.isinf(values).any()):
            raise UploadError(f"{name}: refused: tensor '{label}' contains NaN or inf")
    for node in nodes(model):
        for attr in node.attribute if node.op_type == "Constant" else ():
            values = np.asarray([attr.f] if attr.name == "value_float" else attr.floats)
            if np.isnan(values).any() or (values.size > 1 and np.isinf(values).any()):
                raise UploadError(
                    f"{name}: refused: the Constant node '{node.name or node.output[0]}' "
                    "contains NaN or inf"
                )


def stored_parameters(model: onnx.ModelProto) -> int:
    """Float values stored in the graph's initializers: its parameter count, plus any
    float constants the exporter kept (a frequency table, mask fill values)."""
    return sum(math.prod(t.dims) for t in model.graph.initializer if t.data_type in _FLOAT_TYPES)


def graph_config(model: onnx.ModelProto) -> ModelConfig:
    """The ``config`` metadata of a graph that passed :func:`validate_onnx`."""
    return ModelConfig.from_json({p.key: p.value for p in model.metadata_props}["config"])


def check_graph(data: bytes, name: str = "model.onnx") -> onnx.ModelProto:
    """The static checks every uploaded graph passes, contract or foreign (worker side):
    size; nodes and parts counted on the wire; parse; at most MAX_PARTS messages; no
    external data (before ``onnx.checker``); standard domains and allowed operators;
    bounded dims and stored bytes; no NaN/inf stored; ``onnx.checker``; no sizes set by
    the inputs' values. Nothing is opened or run.

    Raises:
        UploadError: naming the file and the problem.
    """
    check_size(name, data)
    model = parse_graph(name, data)
    if not model.HasField("graph") or not model.graph.node:
        raise UploadError(f"{name}: not an ONNX model (it has no graph)")
    check_parts(name, model)
    _check_external_data(name, model)  # before anything that could resolve a path
    _check_operators(name, model)
    _check_sizes(name, model)
    _check_finite(name, model)
    try:
        onnx.checker.check_model(model)
    except Exception as exc:  # onnx raises several checker error types
        raise LibraryRefusal(
            f"{name}: not a valid ONNX model: onnx's checker refuses it (its message is in "
            "the server's log); run onnx.checker.check_model on it on your computer, or "
            "export it again",
            exc,
        ) from None
    _check_value_dependent_sizes(name, model)
    return model


def validate_onnx(data: bytes, name: str = "model.onnx") -> tuple[onnx.ModelProto, dict]:
    """Check an uploaded ONNX graph (bytes, at most MAX_UPLOAD_BYTES) without running
    or resolving anything.

    Runs in the upload worker. Order: size; nodes and parts counted on the wire
    (``upload/onnx_wire.py``); parse; at most MAX_PARTS protobuf messages; no tensor anywhere
    with external data (never opened, before
    ``onnx.checker``); only standard domains and allowed operator types; bounded
    dims and stored bytes; no NaN/inf in stored float tensors; ``onnx.checker``;
    no Range/ConstantOfShape/Expand/Tile sized by the inputs' values;
    ``config`` and ``tokenizer`` metadata valid, the config within
    ``check_config_size`` and every token id below ``vocab_size``; the inspection
    contract (inspect, fast or step graph). Run :func:`upload.onnx_contract.run_trial`
    afterwards to check what the graph really returns.

    Returns:
        The parsed ModelProto and its tokenizer as a spec (``upload/tokenizer_spec.py``).

    Raises:
        UploadError: naming the file and the problem, e.g. "missing outputs: attn, scores".
    """
    model = check_graph(data, name)
    meta = {p.key: p.value for p in model.metadata_props}
    for key in ("config", "tokenizer"):
        if key not in meta:
            raise UploadError(
                f"{name}: has no '{key}' metadata; export it with export/graphs.py, or "
                "upload a language model's graph together with its tokenizer.json (or "
                "nanoGPT meta.pkl) to have its attention found"
            )
    cfg, spec = read_metadata(meta["config"], meta["tokenizer"], name)
    check_contract(name, model, cfg)
    return model, spec
