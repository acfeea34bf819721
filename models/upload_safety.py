"""Checks that make an uploaded file safe to open, before any parser trusts it.

Uploads come from anyone who can reach the classroom server, so every file is
hostile until these checks pass: size limits, format sniffed from the content
(never the extension), zip bombs, pickles that try to load code, and configs
that would allocate too much (parameters, or the activations the app shows).
ONNX graphs are checked in ``models/onnx_safety.py`` and test-run in a
sandboxed child process by ``models/onnx_contract.py``. Every refusal is an
:class:`UploadError` (a ``ValueError``) whose message says in plain words which
file failed and why.
"""

from __future__ import annotations

import json
import pickle
import re
import zipfile
from io import BytesIO
from pathlib import PurePath

import onnx
import torch
from google.protobuf.message import DecodeError

from models.config import ModelConfig

MAX_UPLOAD_BYTES = 50 * 1024 * 1024  # = server.maxUploadSize (MB) in .streamlit/config.toml
MAX_FILES = 4  # a ckpt.pt + meta.pkl, or up to three ONNX graphs
MAX_ZIP_MEMBERS = 4096  # a nanoGPT ckpt.pt holds one member per tensor (model + optimizer)
MAX_ZIP_UNCOMPRESSED = 2 * MAX_UPLOAD_BYTES  # torch stores members uncompressed
MAX_ZIP_RATIO = 100  # uncompressed / compressed size of one member
MAX_PARAMS = 50_000_000  # what a model's config may ask us to allocate
MAX_ONNX_DIM = 65536  # largest declared dimension in an ONNX graph, longest context
MAX_ACTIVATION_ELEMENTS = 64 * 2**20  # float32 values of the inspect outputs at full context

EXTENSIONS = {
    ".safetensors": "safetensors",
    ".pt": "torch-zip",
    ".pth": "torch-zip",
    ".ckpt": "torch-zip",
    ".pkl": "pickle",
    ".onnx": "onnx",
}
DESCRIPTIONS = {
    "safetensors": "a safetensors checkpoint",
    "torch-zip": "a PyTorch checkpoint",
    "onnx": "an ONNX file",
    "pickle": "a pickle file",
}


class UploadError(ValueError):
    """An uploaded file was refused; the message says which file and why."""


def check_size(name: str, data: bytes) -> None:
    """Raises UploadError if ``data`` is empty or larger than MAX_UPLOAD_BYTES."""
    if not data:
        raise UploadError(f"{name}: the file is empty")
    if len(data) > MAX_UPLOAD_BYTES:
        raise UploadError(
            f"{name}: too large ({len(data):,} bytes); "
            f"the limit is {MAX_UPLOAD_BYTES // 2**20} MB per file"
        )


def sniff_format(data: bytes) -> str:
    """The file's format judged by its content: "safetensors" | "torch-zip" | "onnx" | "pickle".

    Raises:
        UploadError: if the bytes are none of these (or too damaged to tell).
    """
    header_len = int.from_bytes(data[:8], "little") if len(data) >= 8 else 0
    if 2 <= header_len <= len(data) - 8 and data[8:9] == b"{":
        return "safetensors"
    if data[:4] == b"PK\x03\x04":
        return "torch-zip"
    if data[:1] == b"\x80":
        return "pickle"
    proto = onnx.ModelProto()
    try:
        proto.ParseFromString(data)
    except (DecodeError, RuntimeWarning, ValueError):
        proto = None
    if proto is not None and proto.HasField("graph") and len(proto.graph.node):
        return "onnx"
    raise UploadError("not a safetensors, PyTorch, ONNX or pickle file")


def expect_format(name: str, data: bytes, expected: str | None = None) -> str:
    """Sniff ``data`` and check it matches ``expected`` (default: by the extension of ``name``).

    Raises:
        UploadError: for an unsupported extension, unreadable content, or content
            of another format ("model.pt is not a PyTorch checkpoint: it looks like
            an ONNX file").
    """
    expected = expected or EXTENSIONS.get(PurePath(name).suffix.lower())
    if expected is None:
        raise UploadError(
            f"{name}: unsupported file type; upload a .safetensors file, "
            "a nanoGPT ckpt.pt with its meta.pkl, or .onnx graphs"
        )
    try:
        found = sniff_format(data)
    except UploadError:
        raise UploadError(
            f"{name}: truncated or corrupt (not readable as {DESCRIPTIONS[expected]})"
        ) from None
    if expected == "torch-zip" and found == "pickle":
        raise UploadError(
            f"{name} is not a PyTorch zip checkpoint but a bare pickle (PyTorch's "
            "pre-1.6 format, or a meta.pkl?); re-save checkpoints with a recent torch.save"
        )
    if found != expected:
        raise UploadError(
            f"{name} is not {DESCRIPTIONS[expected]}: it looks like {DESCRIPTIONS[found]}"
        )
    return found


def safetensors_metadata(name: str, data: bytes) -> dict[str, str]:
    """Read a safetensors header (JSON only) and return its ``__metadata__``.

    Raises:
        UploadError: "truncated or corrupt" if the header is unreadable or the
            tensors it lists do not end exactly at the end of the file.
    """
    header_len = int.from_bytes(data[:8], "little")
    try:
        header = json.loads(data[8 : 8 + header_len])
        metadata = header.pop("__metadata__", None) or {}
        end = max((v["data_offsets"][1] for v in header.values()), default=0)
    except (ValueError, TypeError, KeyError, IndexError, AttributeError):
        raise UploadError(f"{name}: truncated or corrupt (unreadable header)") from None
    if end != len(data) - 8 - header_len or not isinstance(metadata, dict):
        raise UploadError(f"{name}: truncated or corrupt (expected {end} bytes of weights)")
    return metadata


def check_zip(name: str, data: bytes) -> None:
    """Refuse zip bombs and damaged zips before ``torch.load`` reads one.

    Checks the member count, each member's compression ratio and the total
    uncompressed size from the directory, then decompresses every member in
    chunks (counting the real bytes and verifying each CRC), so a directory
    that lies about sizes is caught too.

    Raises:
        UploadError: "truncated or corrupt", "too many files inside", or
            "refused: it unpacks to ...".
    """
    try:
        archive = zipfile.ZipFile(BytesIO(data))
        members = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError) as exc:
        raise UploadError(f"{name}: truncated or corrupt ({exc})") from None
    if len(members) > MAX_ZIP_MEMBERS:
        raise UploadError(f"{name}: refused: {len(members)} files inside (limit {MAX_ZIP_MEMBERS})")
    limit_mb = MAX_ZIP_UNCOMPRESSED // 2**20
    if sum(m.file_size for m in members) > MAX_ZIP_UNCOMPRESSED:
        raise UploadError(f"{name}: refused: it unpacks to more than {limit_mb} MB (a zip bomb?)")
    for m in members:
        if m.file_size > 1 << 16 and m.file_size > MAX_ZIP_RATIO * max(m.compress_size, 1):
            raise UploadError(
                f"{name}: refused: '{m.filename}' is compressed more than {MAX_ZIP_RATIO} times "
                "(a zip bomb?); PyTorch checkpoints are stored uncompressed"
            )
    total = 0
    for m in members:
        try:
            total += _unpacked_size(archive, m, MAX_ZIP_UNCOMPRESSED - total)
        except (zipfile.BadZipFile, OSError, EOFError, RuntimeError, NotImplementedError) as exc:
            raise UploadError(f"{name}: truncated or corrupt ({exc})") from None
        if total > MAX_ZIP_UNCOMPRESSED:
            raise UploadError(f"{name}: refused: it unpacks to more than {limit_mb} MB")


def _unpacked_size(archive: zipfile.ZipFile, member: zipfile.ZipInfo, budget: int) -> int:
    """Decompress ``member`` in 1 MB chunks (checking its CRC), stopping past ``budget``."""
    size = 0
    with archive.open(member) as f:
        while size <= budget and (chunk := f.read(1 << 20)):
            size += len(chunk)
    return size


class PlainUnpickler(pickle.Unpickler):
    """Unpickles only plain data: dicts, lists, tuples, strings, numbers, bools, None.

    Those need no globals, so ``find_class`` refuses every class or function a
    pickle asks for; that is where a malicious pickle would load ``os.system``.
    """

    def __init__(self, file, name: str):
        super().__init__(file)
        self.name = name

    def find_class(self, module: str, name: str):
        raise UploadError(
            f"{self.name}: refused: it tries to load '{module}.{name}' "
            "(only plain dicts, lists, strings and numbers are allowed)"
        )

    def persistent_load(self, pid):
        raise UploadError(f"{self.name}: refused: it refers to outside objects")


def plain_unpickle(name: str, data: bytes):
    """Unpickle ``data`` with :class:`PlainUnpickler`.

    Raises:
        UploadError: if the pickle asks for any class or function, or is damaged.
    """
    try:
        return PlainUnpickler(BytesIO(data), name).load()
    except UploadError:
        raise
    except Exception as exc:  # pickle raises many types on damaged input
        raise UploadError(f"{name}: truncated or corrupt ({type(exc).__name__})") from None


def safe_torch_load(name: str, data: bytes) -> dict:
    """``torch.load(weights_only=True)`` of a nanoGPT checkpoint, after the zip checks.

    Returns:
        The checkpoint dict; it has at least ``model`` and ``model_args``.

    Raises:
        UploadError: wrong format, zip bomb, a pickle that asks for anything but
            tensors and plain values ("refused: it tries to load 'posix.system'"),
            "truncated or corrupt", or no ``model``/``model_args``.
    """
    check_size(name, data)
    expect_format(name, data, "torch-zip")
    check_zip(name, data)
    try:
        obj = torch.load(BytesIO(data), weights_only=True, map_location="cpu")
    except pickle.UnpicklingError as exc:
        found = re.search(r"GLOBAL ([\w.]+)", str(exc))
        what = f"'{found.group(1)}'" if found else "code"
        raise UploadError(
            f"{name}: refused: it tries to load {what} (only tensors and plain values are allowed)"
        ) from None
    except Exception as exc:  # torch raises RuntimeError and others on damaged files
        raise UploadError(f"{name}: truncated or corrupt ({str(exc)[:200]})") from None
    if not isinstance(obj, dict) or "model" not in obj or "model_args" not in obj:
        keys = ", ".join(map(str, list(obj)[:8])) if isinstance(obj, dict) else type(obj).__name__
        raise UploadError(
            f"{name}: not a nanoGPT checkpoint (it needs 'model' and 'model_args'; found {keys})"
        )
    return obj


def count_params(cfg: ModelConfig) -> int:
    """Parameters ``Transformer(cfg)`` would allocate (a count of float32 values),
    computed without allocating."""
    C, M, V = cfg.d_model, cfg.d_mlp, cfg.vocab_size
    ln = C * (2 if cfg.ln_bias else 1)
    block = 2 * ln + 4 * C * C + 2 * C * M + (4 * C + M + C if cfg.bias else 0)
    pos = cfg.context_length * C if cfg.pos_enc == "learned" else 0
    return V * C * (1 if cfg.tie_weights else 2) + pos + cfg.n_layer * block + ln


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


def check_config_size(name: str, cfg: ModelConfig) -> None:
    """Refuse configs too large to build or to run here, before anything is allocated.

    Limits: ``count_params(cfg)`` <= MAX_PARAMS values, ``context_length`` <=
    MAX_ONNX_DIM tokens, and ``activation_elements(cfg)`` (the inspect outputs at the
    full context) <= MAX_ACTIVATION_ELEMENTS float32 values (256 MB).

    Raises:
        UploadError: naming the file, the size the config asks for and the limit.
    """
    n = count_params(cfg)
    if n > MAX_PARAMS or cfg.context_length > MAX_ONNX_DIM:
        raise UploadError(
            f"{name}: refused: the config describes {n:,} parameters and a context of "
            f"{cfg.context_length} tokens (limits {MAX_PARAMS:,} and {MAX_ONNX_DIM})"
        )
    acts = activation_elements(cfg)
    if acts > MAX_ACTIVATION_ELEMENTS:
        raise UploadError(
            f"{name}: refused: at its full context of {cfg.context_length} tokens the "
            f"attention outputs the app shows ({cfg.n_layer} layers x {cfg.n_head} heads x "
            f"T x T, Q/K/V, ...) would hold {acts:,} float32 values "
            f"({acts * 4 / 2**20:,.0f} MB; limit {MAX_ACTIVATION_ELEMENTS * 4 // 2**20} MB); "
            "a shorter context_length or fewer layers or heads would fit"
        )
