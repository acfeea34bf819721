"""Does an uploaded ONNX graph follow the inspection contract (``models/contract.py``)?

First statically (:func:`check_contract`: input and output names, input types and
dims, output ranks), then by running it (:func:`run_trial`). Static checks cannot
see what a graph computes: its ``config`` metadata may describe 4 layers on a
2-layer graph, it may compute NaN, or a node such as ConstantOfShape([65536,
65536, 16]) may ask for terabytes. So the graphs are opened and run only
inside the upload worker (``upload/worker.py``), limited in memory and time: when a
graph asks for too much, onnxruntime fails or the worker dies, never the server.
Each inspect and fast graph runs on SHORT_T tokens and on the full context (the
longest input the app feeds it); a step graph runs one token at position 0 and
at ``context_length - 1``. Every contract output's real shape must match the
config, and be float32 and finite.
"""

from __future__ import annotations

import re

import numpy as np
import onnx

from models import contract
from models.config import ModelConfig
from upload.errors import LibraryRefusal, UploadError
from upload.limits import WORKER_MEMORY_BYTES

SHORT_T = 3  # tokens in the first test sentence
_INT_INPUTS = {contract.INPUT_NAME, "token", "position"}
AXIS_NAMES = {
    "1": "batch",
    "L": "n_layer",
    "H": "n_head",
    "T": "tokens",
    "D": "d_head",
    "C": "d_model",
    "V": "vocab_size",
}


def graph_role(model: onnx.ModelProto) -> str:
    """ "inspect", "fast" or "step", judged by the graph's input and output names."""
    inputs = {i.name for i in model.graph.input}
    outputs = [o.name for o in model.graph.output]
    if "token" in inputs:
        return "step"
    return "fast" if outputs == ["logits"] else "inspect"


def _check_declared_inputs(name: str, inputs: dict, cfg: ModelConfig) -> None:
    """Element types and numeric dims of the contract inputs (a frozen T is refused)."""
    sizes = contract.axis_sizes(cfg, T=-1)
    axes = {contract.INPUT_NAME: "1T", **contract.STEP_INPUT_AXES}
    for input_name, value in inputs.items():
        ttype = value.type.tensor_type
        want_type = onnx.TensorProto.INT64 if input_name in _INT_INPUTS else onnx.TensorProto.FLOAT
        if ttype.elem_type != want_type:
            raise UploadError(
                f"{name}: input '{input_name}' must be "
                f"{onnx.helper.tensor_dtype_to_string(want_type).removeprefix('TensorProto.')}"
            )
        dims = ttype.shape.dim if ttype.HasField("shape") else []
        want = axes[input_name]
        if dims and len(dims) != len(want):
            raise UploadError(
                f"{name}: input '{input_name}' has {len(dims)} axes, the contract says {len(want)}"
            )
        for axis, d in zip(want, dims, strict=False):
            if d.HasField("dim_value") and d.dim_value != sizes[axis]:
                raise UploadError(
                    f"{name}: input '{input_name}' declares {list(d.dim_value for d in dims)}: "
                    + (
                        "its token axis must stay dynamic"
                        if axis == "T"
                        else f"the config needs {AXIS_NAMES[axis]} = {sizes[axis]}"
                    )
                )


def check_contract(name: str, model: onnx.ModelProto, cfg: ModelConfig) -> None:
    """Input and output names, input types and dims, and output ranks of the contract
    (``models/contract.py``) for the graph's role (inspect, fast or step).

    Raises:
        UploadError: e.g. "missing outputs: attn, scores" or "input 'state' declares ...".
    """
    role = graph_role(model)
    init = {t.name for t in model.graph.initializer}
    inputs = {i.name: i for i in model.graph.input if i.name not in init}
    outputs = {o.name: o for o in model.graph.output}
    want_in = contract.STEP_INPUTS if role == "step" else (contract.INPUT_NAME,)
    want_out = {
        "step": contract.STEP_OUTPUTS,
        "fast": ("logits",),
        "inspect": contract.inspect_outputs(cfg.attention),
    }[role]
    if role == "step" and cfg.attention != "linear":
        raise UploadError(
            f"{name}: a step graph uploads only for linear attention"
            + (
                "; a DeltaNet model uploads as its .safetensors checkpoint"
                if cfg.attention == "delta"
                else ""
            )
        )
    missing_in = [n for n in want_in if n not in inputs]
    if missing_in or len(inputs) != len(want_in):
        raise UploadError(
            f"{name}: inputs must be {', '.join(want_in)} (found: {', '.join(inputs) or 'none'})"
        )
    _check_declared_inputs(name, inputs, cfg)
    missing = [n for n in want_out if n not in outputs and n not in contract.OPTIONAL_OUTPUTS]
    if missing:
        raise UploadError(
            f"{name}: does not follow the inspection contract for {cfg.attention} attention: "
            f"missing outputs: {', '.join(missing)}"
        )
    if role == "inspect":
        for n in (n for n in want_out if n in outputs):
            dims = outputs[n].type.tensor_type.shape.dim
            if dims and len(dims) != contract.OUTPUT_RANKS[n]:
                raise UploadError(
                    f"{name}: output '{n}' has {len(dims)} axes, the contract says "
                    f"{contract.OUTPUT_RANKS[n]}"
                )


def _ids_feed(cfg: ModelConfig, T: int) -> dict:
    ids = [(7 * i + 1) % cfg.vocab_size for i in range(T)]
    return {contract.INPUT_NAME: {"dtype": "int64", "shape": [1, T], "values": ids}}


def _step_feed(cfg: ModelConfig, position: int) -> dict:
    L, H, D = cfg.n_layer, cfg.n_head, cfg.d_head
    return {
        "token": {"dtype": "int64", "shape": [1, 1], "values": [1 % cfg.vocab_size]},
        "position": {"dtype": "int64", "shape": [1], "values": [position]},
        "state": {"dtype": "float32", "shape": [L, H, D, D], "values": None},
        "normalizer": {"dtype": "float32", "shape": [L, H, D], "values": None},
    }


def trial_inputs(role: str, cfg: ModelConfig) -> list[tuple[int, dict]]:
    """The test runs of one graph: ``(T, feed spec)`` pairs.

    inspect/fast: ``input_ids`` (1, T) for T = min(SHORT_T, context) and T = context;
    step: one token at position 0 and at ``context_length - 1`` from zero state
    (L, H, D, D) and normalizer (L, H, D); T is 1 there.
    """
    ctx = cfg.context_length
    if role == "step":
        return [(1, _step_feed(cfg, p)) for p in sorted({0, ctx - 1})]
    return [(T, _ids_feed(cfg, T)) for T in sorted({min(SHORT_T, ctx), ctx})]


def _expected_axes(role: str, cfg: ModelConfig) -> dict[str, str]:
    if role == "step":  # this kind's step outputs (linear: normalizer_out, not conv_out)
        _, names = contract.KIND_STEP.get(cfg.attention, contract.KIND_STEP["linear"])
        return {n: contract.STEP_OUTPUT_AXES[n] for n in names}
    names = ("logits",) if role == "fast" else contract.inspect_outputs(cfg.attention)
    return {n: contract.OUTPUT_AXES[n] for n in names}


def check_outputs(name: str, role: str, cfg: ModelConfig, T: int, outputs: list[dict]) -> None:
    """Compare one test run's outputs (name, shape, dtype, finite) with the contract and config.

    Raises:
        UploadError: naming the output, its real shape, the shape the config needs and
            which config field disagrees ("n_layer: the config says 4, the graph gives 2");
            or a non-float32 or non-finite output.
    """
    got = {o["name"]: o for o in outputs}
    sizes = contract.axis_sizes(cfg, T)
    what = f"a {T}-token test input" if role != "step" else "a one-token test step"
    for out, axes in _expected_axes(role, cfg).items():
        if out not in got:
            if out in contract.OPTIONAL_OUTPUTS:
                continue
            raise UploadError(f"{name}: refused: it returned no '{out}'")
        shape, want = got[out]["shape"], tuple(sizes[a] for a in axes)
        if shape is None:
            raise UploadError(f"{name}: refused: output '{out}' is not a tensor")
        if tuple(shape) != want:
            diffs = [
                f"{AXIS_NAMES[a]}: the config says {w}, the graph gives {g}"
                for a, w, g in zip(axes, want, shape, strict=False)
                if w != g
            ]
            if len(shape) != len(want):
                diffs.append(f"it has {len(shape)} axes, the contract says {len(want)}")
            raise UploadError(
                f"{name}: refused: the config metadata does not match the graph: on {what} "
                f"output '{out}' has shape {tuple(shape)}, the config needs {want} "
                f"({'; '.join(dict.fromkeys(diffs))})"
            )
        if got[out]["dtype"] != "float32":
            raise UploadError(
                f"{name}: refused: output '{out}' is {got[out]['dtype']}, the contract says float32"
            )
        if not got[out]["finite"]:
            raise UploadError(f"{name}: refused: output '{out}' contains NaN or inf on {what}")


def run_trial(sessions: dict[str, tuple[str, object]], cfg: ModelConfig) -> None:
    """Run each opened graph on its trial inputs and check every output (worker side).

    The worker that calls this is already fenced in (``upload/worker.py``: address
    space, CPU time, a wall-clock deadline kept by the server), so a graph that asks for
    too much fails with onnxruntime's error or ends the worker, never the server.

    Args:
        sessions: role ("inspect", "fast", "step") -> (file name, onnxruntime session).
        cfg: their common config (from the metadata).

    Raises:
        UploadError: the first problem found, naming the file: a shape that does not
            match the config, a non-finite or non-float32 output, or an onnxruntime
            error on the test input ("needed more than 2 GiB" for an allocation failure).
    """
    for role, (fname, session) in sessions.items():
        names = [o.name for o in session.get_outputs()]
        for T, feed in trial_inputs(role, cfg):
            when = (
                "on a one-token test step, " if role == "step" else f"on a {T}-token test input, "
            )
            try:
                results = session.run(None, {k: _array(f) for k, f in feed.items()})
            except Exception as exc:  # onnxruntime's errors derive from Exception only
                if re.search(r"alloc|memory", str(exc), re.IGNORECASE):
                    raise LibraryRefusal(
                        f"{fname}: refused: {when}it needed more than "
                        f"{WORKER_MEMORY_BYTES / 2**30:.0f} GiB of memory",
                        exc,
                    ) from None
                raise LibraryRefusal(
                    f"{fname}: refused: {when}onnxruntime could not run it (its message is "
                    "in the server's log); check that the graph follows the inspection "
                    "contract (export it with export/graphs.py)",
                    exc,
                ) from None
            described = [{"name": n, **_describe(v)} for n, v in zip(names, results, strict=True)]
            del results
            check_outputs(fname, role, cfg, T, described)


def _array(feed: dict) -> np.ndarray:
    if feed["values"] is None:
        return np.zeros(feed["shape"], feed["dtype"])
    return np.asarray(feed["values"], feed["dtype"]).reshape(feed["shape"])


def _describe(value) -> dict:
    if not isinstance(value, np.ndarray):
        return {"shape": None, "dtype": type(value).__name__, "finite": False}
    finite = value.dtype.kind != "f" or bool(np.isfinite(value).all())
    return {"shape": [int(d) for d in value.shape], "dtype": str(value.dtype), "finite": finite}
