"""Hostile uploads for the ``isolation`` bench section, built in memory.

The benchmark does not import ``tests/``: these few generators are copies, trimmed to
what the section uses, of ``tests/helpers/hostile.py`` (``zip_bytes``),
``tests/helpers/hostile_onnx.py`` (``rewire_output``, ``allocate_at_length``; the slow
graph here is gated by length the same way) and ``tests/helpers/nanogpt_layout.py`` (a
nanoGPT ``ckpt.pt`` and ``meta.pkl``, tiny and without optimizer state).
"""

from __future__ import annotations

import io
import pickle
import zipfile

import onnx
from onnx import helper

I64, F32 = onnx.TensorProto.INT64, onnx.TensorProto.FLOAT
NANOGPT_TEXT = "First Citizen:\nBefore we proceed any further, hear me speak."


def nested_key_pickle(depth: int = 1_000_000) -> bytes:
    """A pickled dict whose key is a tuple nested ``depth`` deep (written as opcodes, so
    making it recurses nowhere): hashing the key crashes CPython with SIGSEGV."""
    return b"\x80\x02}" + b")" + b"\x85" * depth + b"K\x01s."


def nanogpt_ckpt(vocab_size: int, seed: int = 0, **sizes) -> bytes:
    """A nanoGPT ``ckpt.pt`` (random weights, tied embeddings, no optimizer state) with
    ``vocab_size`` token rows: 2 layers, 16 wide, a block of 16, or ``sizes``
    (``n_layer``, ``n_head``, ``n_embd``, ``block_size``)."""
    import torch

    args = dict(n_layer=2, n_head=2, n_embd=16, block_size=16, bias=True, vocab_size=vocab_size)
    args.update(sizes)
    g, C = torch.Generator().manual_seed(seed), args["n_embd"]
    sd = {
        "transformer.wte.weight": torch.randn(vocab_size, C, generator=g) * 0.2,  # (V, C)
        "transformer.wpe.weight": torch.randn(args["block_size"], C, generator=g) * 0.2,
    }
    shapes = {"attn.c_attn": (3 * C, C), "attn.c_proj": (C, C)}
    shapes |= {"mlp.c_fc": (4 * C, C), "mlp.c_proj": (C, 4 * C)}
    for i in range(args["n_layer"]):
        for name, (n_out, n_in) in shapes.items():
            sd[f"transformer.h.{i}.{name}.weight"] = torch.randn(n_out, n_in, generator=g) * 0.2
            sd[f"transformer.h.{i}.{name}.bias"] = torch.zeros(n_out)
        for ln in ("ln_1", "ln_2"):
            sd[f"transformer.h.{i}.{ln}.weight"] = torch.ones(C)
            sd[f"transformer.h.{i}.{ln}.bias"] = torch.zeros(C)
    sd["transformer.ln_f.weight"], sd["transformer.ln_f.bias"] = torch.ones(C), torch.zeros(C)
    sd["lm_head.weight"] = sd["transformer.wte.weight"]  # tied, as nanoGPT saves it
    buf = io.BytesIO()
    torch.save({"model": sd, "optimizer": {}, "model_args": args, "iter_num": 1}, buf)
    return buf.getvalue()


def nanogpt_files(seed: int = 0, **sizes) -> dict[str, bytes]:
    """A valid nanoGPT character-level ``ckpt.pt`` (:func:`nanogpt_ckpt`, ``sizes``) and
    its ``meta.pkl``."""
    chars = sorted(set(NANOGPT_TEXT))
    stoi = {ch: i for i, ch in enumerate(chars)}
    meta = pickle.dumps({"vocab_size": len(chars), "itos": dict(enumerate(chars)), "stoi": stoi})
    return {"ckpt.pt": nanogpt_ckpt(len(chars), seed, **sizes), "meta.pkl": meta}


def zip_bytes(members: dict[str, int]) -> bytes:
    """A deflated zip whose members are runs of zero bytes, name -> size (1 MB at a time)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, size in members.items():
            with archive.open(name, "w", force_zip64=True) as f:
                for start in range(0, size, 1 << 20):
                    f.write(bytes(min(1 << 20, size - start)))
    return buf.getvalue()


def rewire_output(model: onnx.ModelProto, name: str, build) -> onnx.ModelProto:
    """A copy whose output ``name`` is recomputed from its original value by
    ``build(original, name) -> (nodes, initializers)``; the output's dims become symbolic."""
    bad = onnx.ModelProto()
    bad.CopyFrom(model)
    original = name + "_original"
    for node in bad.graph.node:
        node.output[:] = [original if o == name else o for o in node.output]
        node.input[:] = [original if i == name else i for i in node.input]
    nodes, initializers = build(original, name)
    bad.graph.node.extend(nodes)
    bad.graph.initializer.extend(initializers)
    shape = next(o for o in bad.graph.output if o.name == name).type.tensor_type.shape
    for i, dim in enumerate(shape.dim):
        dim.Clear()
        dim.dim_param = f"{name}_{i}"
    return bad


def _size_at_length(original: str, length: int, size: int) -> tuple[list, list]:
    """Nodes computing ``h_size`` = ``size`` when the sentence has ``length`` tokens, else 1
    (through Shape: sizes that follow the length pass the static checks)."""
    nodes = [
        helper.make_node("Shape", [original], ["h_shape"]),
        helper.make_node("Gather", ["h_shape", "h_one"], ["h_T"], axis=0),
        helper.make_node("Equal", ["h_T", "h_length"], ["h_hit"]),
        helper.make_node("Cast", ["h_hit"], ["h_hit64"], to=I64),
        helper.make_node("Mul", ["h_hit64", "h_extra"], ["h_n"]),
        helper.make_node("Add", ["h_n", "h_one"], ["h_size0"]),
        helper.make_node("Unsqueeze", ["h_size0", "h_axes"], ["h_size"]),
    ]
    constants = [
        helper.make_tensor("h_one", I64, [], [1]),
        helper.make_tensor("h_length", I64, [], [length]),
        helper.make_tensor("h_extra", I64, [], [size - 1]),
        helper.make_tensor("h_axes", I64, [1], [0]),
    ]
    return nodes, constants


def _added_as_zero(value: str, original: str, name: str) -> tuple[list, list]:
    """``name = original + 0 * sum(value)``: the output is unchanged, ``value`` is computed."""
    nodes = [
        helper.make_node("ReduceSum", [value], ["h_sum"], keepdims=0),
        helper.make_node("Mul", ["h_sum", "h_zero"], ["h_nothing"]),
        helper.make_node("Add", [original, "h_nothing"], [name]),
    ]
    return nodes, [helper.make_tensor("h_zero", F32, [], [0.0])]


def allocate_at_length(length: int, values: int = 2**30):
    """Builder for :func:`rewire_output`: at ``length`` tokens only, the graph asks for
    ``values`` float32 values (4 GiB by default); at every other length, for one."""

    def build(original: str, name: str):
        gate, constants = _size_at_length(original, length, values)
        tail, zero = _added_as_zero("h_big", original, name)
        nodes = [*gate, helper.make_node("ConstantOfShape", ["h_size"], ["h_big"]), *tail]
        return nodes, constants + zero

    return build


def slow_at_length(length: int, n: int = 2048, repeats: int = 300):
    """Builder for :func:`rewire_output`: at ``length`` tokens only, ``repeats`` chained
    (n x n) MatMuls (minutes of CPU in about 50 MB); at every other length, 1 x 1."""

    def build(original: str, name: str):
        gate, constants = _size_at_length(original, length, n)
        nodes = gate + [
            helper.make_node("Concat", ["h_size", "h_size"], ["h_dims"], axis=0),
            helper.make_node("ConstantOfShape", ["h_dims"], ["h_m0"]),
        ]
        for i in range(repeats):
            nodes.append(helper.make_node("MatMul", [f"h_m{i}", "h_m0"], [f"h_m{i + 1}"]))
        tail, zero = _added_as_zero(f"h_m{repeats}", original, name)
        return nodes + tail, constants + zero

    return build


def truncated(data: bytes) -> bytes:
    """The first half of ``data`` (an interrupted download)."""
    return data[: len(data) // 2]
