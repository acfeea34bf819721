"""What a file or a config may ask the server to hold: pure arithmetic, safe on both sides."""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import PurePath

from models import contract
from models.config import ModelConfig
from upload.errors import UploadError
from upload.limits import BROWSER, MAX_ACTIVATION_ELEMENTS, MAX_ONNX_DIM, MAX_UPLOAD_BYTES, Limits

CHECKPOINT_SUFFIXES = (".pt", ".pth", ".ckpt")  # PyTorch checkpoints (nanoGPT's ckpt.pt)


def shrink_command(checkpoint: str = "ckpt.pt", vocabulary: str = "meta.pkl") -> str:
    """The command that turns a nanoGPT checkpoint (optimizer state and all) into one
    compact upload file: "python -m upload.convert ckpt.pt --meta meta.pkl --out
    converted/"; ``vocabulary`` ending in ``.json`` is passed as ``--tokenizer``."""
    flag = "--tokenizer" if vocabulary.lower().endswith(".json") else "--meta"
    return f"python -m upload.convert {checkpoint} {flag} {vocabulary} --out converted/"


def converted_file(checkpoint: str = "ckpt.pt") -> str:
    """The file :func:`shrink_command` writes: "converted/ckpt.safetensors"."""
    return f"converted/{PurePath(checkpoint).stem or 'ckpt'}.safetensors"


def shrink_advice(checkpoint: str = "ckpt.pt", vocabulary: str = "meta.pkl") -> str:
    """The command and the file to upload then, in one phrase."""
    command = shrink_command(checkpoint, vocabulary)
    return f"{command}, then upload {converted_file(checkpoint)}"


def shrink_hint(name: str) -> str:
    """For a checkpoint ``name`` (``.pt``, ``.pth``, ``.ckpt``): the sentence that says
    how to shrink it for an upload; "" for any other file."""
    if PurePath(name).suffix.lower() not in CHECKPOINT_SUFFIXES:
        return ""
    return (
        "; a nanoGPT checkpoint holds its optimizer state too (with AdamW twice the "
        f"weights): shrink it on your computer with {shrink_advice(name)}"
    )


def check_file_size(name: str, size: int, limit: int = MAX_UPLOAD_BYTES) -> None:
    """Raises UploadError if a file of ``size`` bytes is empty or larger than ``limit``;
    a checkpoint's message says which command shrinks it (:func:`shrink_hint`)."""
    if size <= 0:
        raise UploadError(f"{name}: the file is empty")
    if size > limit:
        raise UploadError(
            f"{name}: too large ({size:,} bytes); the limit is {limit:,} bytes "
            f"({limit // 1_000_000} MB) per file{shrink_hint(name)}"
        )


def check_size(name: str, data: bytes, limit: int = MAX_UPLOAD_BYTES) -> None:
    """Raises UploadError if ``data`` is empty or larger than ``limit`` (default
    MAX_UPLOAD_BYTES, the browser's)."""
    check_file_size(name, len(data), limit)


def activation_elements(
    cfg: ModelConfig, T: int | None = None, outputs: Iterable[str] | None = None
) -> int:
    """Float32 values the inspect graph returns for one sentence of ``T`` tokens: the one
    sizing function of every context check (the uploader's refusal, the command line's
    ``--context`` advice, a foreign graph's context chooser).

    ``T`` defaults to ``cfg.context_length`` (the longest sentence the app runs).
    ``outputs`` (names) default to every contract output of ``cfg.attention``
    (``models/contract.py``): ``logits`` T*V, ``attn`` and ``scores`` L*H*T*T each,
    ``q`` ``k`` ``v`` ``head_out`` L*H*T*D each, ``pos_enc`` T*C, ``attn_in`` L*T*C; for
    linear attention also ``phi_q``, ``phi_k``, ``normalizer`` L*H*T*D each and ``state``
    L*H*T*D*D. A foreign graph's outputs (``logits``, ``attn``, ``masked_scores``) are
    named by the caller; names of no known output count nothing.
    """
    T = cfg.context_length if T is None else T
    names = contract.inspect_outputs(cfg.attention) if outputs is None else outputs
    sizes = contract.axis_sizes(cfg, T)
    return sum(
        math.prod(sizes[axis] for axis in _AXES[name]) for name in dict.fromkeys(names)
        if name in _AXES
    )  # fmt: skip


_AXES = {**contract.OUTPUT_AXES, **contract.FOREIGN_OUTPUT_AXES}


def longest_context(
    cfg: ModelConfig, limit: int, outputs: Iterable[str] | None = None, upto: int | None = None
) -> int:
    """The longest T <= ``upto`` (default ``cfg.context_length``) whose
    :func:`activation_elements` are at most ``limit`` float32 values; 0 when not even one
    token fits. The count grows with T, so it is found by bisection."""
    lo, hi = 0, cfg.context_length if upto is None else upto
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if activation_elements(cfg, mid, outputs) <= limit else (lo, mid - 1)
    return lo


def largest_T(cfg: ModelConfig, values: int) -> int:
    """The longest sentence (tokens, at most ``cfg.context_length``, at least 1) whose
    inspect outputs (:func:`activation_elements`) hold at most ``values`` float32 values."""
    return max(1, longest_context(cfg, values))


def _what_it_holds(cfg: ModelConfig, outputs: Iterable[str] | None) -> str:
    """What holds the outputs at the full context: "logits 1,024 x 50,257 = 51,463,168,
    attn and scores 2 layers x 4 heads x T x T each = 8,388,608, Q/K/V and the rest ..."."""
    T, names = cfg.context_length, list(outputs or contract.inspect_outputs(cfg.attention))
    logits = activation_elements(cfg, T, ["logits"]) if "logits" in names else 0
    maps = [n for n in names if _AXES.get(n) == "LHTT"]
    square = activation_elements(cfg, T, maps)
    rest = activation_elements(cfg, T, names) - logits - square
    parts = [f"logits {T:,} x {cfg.vocab_size:,} = {logits:,}"]
    L, H = cfg.n_layer, cfg.n_head
    parts.append(f"{' and '.join(maps)} {L} layers x {H} heads x T x T each = {square:,}")
    parts += [f"Q/K/V and the rest {rest:,}"] if rest else []
    return ", ".join(parts)


def check_config_size(
    name: str, cfg: ModelConfig, limits: Limits = BROWSER, outputs: Iterable[str] | None = None
) -> None:
    """Refuse configs too large to build or to run here, before anything is allocated.

    Limits (``limits``, by default the browser's): ``cfg.num_parameters()`` <=
    ``limits.params`` values (MAX_PARAMS), ``context_length`` <= MAX_ONNX_DIM tokens, and
    ``activation_elements(cfg, outputs=outputs)`` (the inspect outputs at the full
    context, logits included; ``outputs``: the names a graph returns, default every
    contract output) <= ``limits.activations`` float32 values (MAX_ACTIVATION_ELEMENTS:
    256 MB; unchecked when None).

    Raises:
        UploadError: naming the file, the size the config asks for, what holds it, the
            limit, and the longest context that fits (:func:`longest_context`).
    """
    n = cfg.num_parameters()
    if n > limits.params or cfg.context_length > MAX_ONNX_DIM:
        raise UploadError(
            f"{name}: refused: the config describes {n:,} parameters and a context of "
            f"{cfg.context_length} tokens (limits {limits.params:,} and {MAX_ONNX_DIM})"
        )
    acts = activation_elements(cfg, outputs=outputs)
    if limits.activations is not None and acts > limits.activations:
        raise UploadError(
            f"{name}: refused: at its full context of {cfg.context_length} tokens the "
            f"outputs the app shows would hold {acts:,} float32 values "
            f"({acts * 4 / 2**20:,.0f} MB; limit {limits.activations * 4 // 2**20} MB): "
            f"{_what_it_holds(cfg, outputs)}; "
            + context_advice(name, longest_context(cfg, limits.activations, outputs))
        )


def check_foreign_size(name: str, cfg: ModelConfig, maps: int) -> None:
    """Refuse a foreign graph's config whose outputs at its context exceed
    MAX_ACTIVATION_ELEMENTS, counted as the worker's context chooser counted them
    (:func:`activation_elements` of ``logits`` and ``maps`` attention maps, 1 or 2:
    ``attn`` and, where the graph gives them, ``masked_scores``).

    Raises:
        UploadError: naming the file, the count and the limit.
    """
    T, outputs = cfg.context_length, contract.FOREIGN_OUTPUTS[: 1 + min(max(maps, 1), 2)]
    n = activation_elements(cfg, T, outputs)
    if n > MAX_ACTIVATION_ELEMENTS:
        raise UploadError(
            f"{name}: refused: at {T} tokens its logits and attention would hold {n:,} "
            f"float32 values (limit {MAX_ACTIVATION_ELEMENTS:,})"
        )


def context_advice(name: str, fits: int) -> str:
    """What to do about a context too long for the activation limit, when ``fits`` tokens
    is the longest that fits: convert with ``--context`` (a checkpoint or a folder), or
    export with a shorter context (an ONNX graph)."""
    if fits < 1:
        return "not even one token fits: fewer layers or heads, or a smaller vocabulary"
    if PurePath(name).suffix.lower() == ".onnx":
        return f"the longest context that fits is {fits} tokens: export it with that context"
    return (
        f"the longest context that fits is {fits} tokens: convert it with "
        f"python -m upload.convert ... --context {fits} --out converted/"
    )
