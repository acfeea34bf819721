"""What a file or a config may ask the server to hold: pure arithmetic, safe on both sides."""

from __future__ import annotations

from pathlib import PurePath

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


def activation_elements(cfg: ModelConfig, T: int | None = None) -> int:
    """Float32 values the inspect graph returns for one sentence of ``T`` tokens.

    ``T`` defaults to ``cfg.context_length`` (the longest sentence the app runs).
    Counts every contract output (``models/contract.py``): ``logits`` T*V, ``attn``
    and ``scores`` L*H*T*T each, ``q`` ``k`` ``v`` ``head_out`` L*H*T*D each,
    ``pos_enc`` T*C, ``attn_in`` L*T*C; for linear attention also ``phi_q``,
    ``phi_k``, ``normalizer`` L*H*T*D each and ``state`` L*H*T*D*D.
    """
    L, H, D, C = cfg.n_layer, cfg.n_head, cfg.d_head, cfg.d_model
    T = cfg.context_length if T is None else T
    n = T * cfg.vocab_size + 2 * L * H * T * T + 4 * L * H * T * D + T * C + L * T * C
    if cfg.attention == "linear":
        n += 3 * L * H * T * D + L * H * T * D * D
    return n


def largest_T(cfg: ModelConfig, values: int) -> int:
    """The longest sentence (tokens, at most ``cfg.context_length``, at least 1) whose
    inspect outputs (:func:`activation_elements`) hold at most ``values`` float32 values."""
    lo, hi = 1, cfg.context_length
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if activation_elements(cfg, mid) <= values else (lo, mid - 1)
    return lo


def check_config_size(name: str, cfg: ModelConfig, limits: Limits = BROWSER) -> None:
    """Refuse configs too large to build or to run here, before anything is allocated.

    Limits (``limits``, by default the browser's): ``cfg.num_parameters()`` <=
    ``limits.params`` values (MAX_PARAMS), ``context_length`` <= MAX_ONNX_DIM tokens, and
    ``activation_elements(cfg)`` (the inspect outputs at the full context) <=
    ``limits.activations`` float32 values (MAX_ACTIVATION_ELEMENTS: 256 MB; unchecked
    when None).

    Raises:
        UploadError: naming the file, the size the config asks for and the limit.
    """
    n = cfg.num_parameters()
    if n > limits.params or cfg.context_length > MAX_ONNX_DIM:
        raise UploadError(
            f"{name}: refused: the config describes {n:,} parameters and a context of "
            f"{cfg.context_length} tokens (limits {limits.params:,} and {MAX_ONNX_DIM})"
        )
    acts = activation_elements(cfg)
    if limits.activations is not None and acts > limits.activations:
        raise UploadError(
            f"{name}: refused: at its full context of {cfg.context_length} tokens the "
            f"attention outputs the app shows ({cfg.n_layer} layers x {cfg.n_head} heads x "
            f"T x T, Q/K/V, ...) would hold {acts:,} float32 values "
            f"({acts * 4 / 2**20:,.0f} MB; limit {limits.activations * 4 // 2**20} MB); "
            "a shorter context_length or fewer layers or heads would fit"
        )


def foreign_output_elements(V: int, L: int, H: int, T: int, maps: int = 2) -> int:
    """Float32 values a foreign ONNX language model returns for one sentence of ``T``
    tokens (``upload/onnx_foreign.py``): ``logits`` T*V plus ``maps`` attention maps
    of L*H*T*T each (``attn``, and ``masked_scores`` where the graph gives them).

    The one sizing of the foreign path: the worker analyses up to the largest T whose
    count is within MAX_ACTIVATION_ELEMENTS (:func:`foreign_context_fit`), and the server
    checks the config it receives with the same count.
    """
    return T * V + maps * L * H * T * T


def foreign_context_fit(V: int, L: int, H: int, maps: int, limit: int) -> int:
    """The largest T whose :func:`foreign_output_elements` is at most ``limit``
    (0 when not even one token fits)."""
    a, b = maps * L * H, V  # a*T^2 + b*T <= limit
    T = int((-b + (b * b + 4 * a * limit) ** 0.5) / (2 * a)) if a else limit // max(b, 1)
    while T > 0 and foreign_output_elements(V, L, H, T, maps) > limit:
        T -= 1
    while foreign_output_elements(V, L, H, T + 1, maps) <= limit:
        T += 1
    return T


def check_foreign_size(name: str, cfg: ModelConfig, maps: int) -> None:
    """Refuse a foreign graph's config whose outputs at its context exceed
    MAX_ACTIVATION_ELEMENTS, counted as the worker counted them
    (:func:`foreign_output_elements`; ``maps``: its attention maps, 1 or 2).

    Raises:
        UploadError: naming the file, the count and the limit.
    """
    L, H, T = cfg.n_layer, cfg.n_head, cfg.context_length
    n = foreign_output_elements(cfg.vocab_size, L, H, T, min(max(maps, 1), 2))
    if n > MAX_ACTIVATION_ELEMENTS:
        raise UploadError(
            f"{name}: refused: at {T} tokens its logits and attention would hold {n:,} "
            f"float32 values (limit {MAX_ACTIVATION_ELEMENTS:,})"
        )
