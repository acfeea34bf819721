"""Checks that make an uploaded file safe to open, before any parser trusts it (worker side).

Uploads come from anyone who can reach the classroom server, so every file is
hostile until these checks pass: size limits, format sniffed from the content
(never the extension), zip bombs, pickles that try to load code, and configs
that would allocate too much (parameters, or the activations the app shows).
ONNX graphs are checked in ``upload/onnx_checks.py`` and test-run by
``upload/onnx_contract.py``. All of it runs inside the upload worker (``upload/worker.py``). Every refusal is an
:class:`UploadError` (a ``ValueError``) whose message says in plain words which
file failed and why.
"""

from __future__ import annotations

import json
import pickle
import pickletools
import re
import zipfile
from io import BytesIO
from pathlib import Path, PurePath

from upload.errors import UploadError
from upload.limits import (
    BROWSER,
    MAX_FILES,
    MAX_PARAMS,
    MAX_ZIP_MEMBERS,
    MAX_ZIP_RATIO,
    MAX_ZIP_UNCOMPRESSED,
    Limits,
)
from upload.onnx_wire import check_wire
from upload.sizes import check_file_size, check_size, shrink_hint

__all__ = ["MAX_FILES", "UploadError"]

EXTENSIONS = {
    ".safetensors": "safetensors",
    ".pt": "torch-zip",
    ".pth": "torch-zip",
    ".ckpt": "torch-zip",
    ".pkl": "pickle",
    ".onnx": "onnx",
    ".json": "json",
}
DESCRIPTIONS = {
    "safetensors": "a safetensors checkpoint",
    "torch-zip": "a PyTorch checkpoint",
    "onnx": "an ONNX file",
    "pickle": "a pickle file",
    "json": "a JSON file (a tokenizer.json)",
}
ZIP_MAGIC = b"PK\x03\x04"


def sniff_format(data: bytes, name: str = "the file") -> str:
    """The file's format judged by its content: "safetensors" | "torch-zip" | "onnx" |
    "pickle" | "json" (an object: a tokenizer.json).

    Raises:
        UploadError: if the bytes are none of these (or too damaged to tell).
    """
    header_len = int.from_bytes(data[:8], "little") if len(data) >= 8 else 0
    if 2 <= header_len <= len(data) - 8 and data[8:9] == b"{":
        return "safetensors"
    if data[:4] == ZIP_MAGIC:
        return "torch-zip"
    if data[:1] == b"\x80":
        return "pickle"
    if data[:64].removeprefix(b"\xef\xbb\xbf").lstrip()[:1] == b"{":
        return "json"
    try:
        if check_wire(name, data):
            return "onnx"
    except UploadError as exc:
        if "refused" in str(exc):
            raise
    raise UploadError("not a safetensors, PyTorch, ONNX, pickle or JSON file")


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
            f"{name}: unsupported file type; upload a .safetensors file, a nanoGPT "
            "ckpt.pt with its meta.pkl or tokenizer.json, .onnx graphs, or an .onnx language "
            "model with its tokenizer.json"
        )
    try:
        found = sniff_format(data, name)
    except UploadError as exc:
        if "refused" in str(exc):
            raise
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
    except RecursionError:
        raise UploadError(f"{name}: refused: its header is nested too deeply") from None
    except (ValueError, TypeError, KeyError, IndexError, AttributeError):
        raise UploadError(f"{name}: truncated or corrupt (unreadable header)") from None
    if end != len(data) - 8 - header_len or not isinstance(metadata, dict):
        raise UploadError(f"{name}: truncated or corrupt (expected {end} bytes of weights)")
    return metadata


def check_zip(name: str, data: bytes | Path, max_unpacked: int = MAX_ZIP_UNCOMPRESSED) -> None:
    """Refuse zip bombs and damaged zips before ``torch.load`` reads one.

    Checks the member count, each member's compression ratio and the total
    uncompressed size (at most ``max_unpacked`` bytes) from the directory, then
    decompresses every member in chunks of 1 MB (counting the real bytes and verifying
    each CRC), so a directory that lies about sizes is caught too. ``data`` is the
    file's bytes, or the path of a local file (the command line), read the same way.

    Raises:
        UploadError: "truncated or corrupt", "too many files inside", or
            "refused: it unpacks to ..." (with the command that shrinks a checkpoint).
    """
    try:
        archive = zipfile.ZipFile(data if isinstance(data, Path) else BytesIO(data))
        members = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError, OSError) as exc:
        raise UploadError(f"{name}: truncated or corrupt ({exc})") from None
    with archive:
        _check_members(name, archive, members, max_unpacked)


def _check_members(name: str, archive: zipfile.ZipFile, members: list, max_unpacked: int) -> None:
    if len(members) > MAX_ZIP_MEMBERS:
        raise UploadError(f"{name}: refused: {len(members)} files inside (limit {MAX_ZIP_MEMBERS})")
    limit_mb = max_unpacked // 2**20
    if sum(m.file_size for m in members) > max_unpacked:
        raise UploadError(
            f"{name}: refused: it unpacks to more than {limit_mb} MB (a zip bomb?)"
            + shrink_hint(name)
        )
    for m in members:
        if m.file_size > 1 << 16 and m.file_size > MAX_ZIP_RATIO * max(m.compress_size, 1):
            raise UploadError(
                f"{name}: refused: '{m.filename}' is compressed more than {MAX_ZIP_RATIO} times "
                "(a zip bomb?); PyTorch checkpoints are stored uncompressed"
            )
    total = 0
    for m in members:
        try:
            total += _unpacked_size(archive, m, max_unpacked - total)
        except (zipfile.BadZipFile, OSError, EOFError, RuntimeError, NotImplementedError) as exc:
            raise UploadError(f"{name}: truncated or corrupt ({exc})") from None
        if total > max_unpacked:
            raise UploadError(
                f"{name}: refused: it unpacks to more than {limit_mb} MB" + shrink_hint(name)
            )


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


def expect_zip_file(name: str, path: Path, limits: Limits = BROWSER) -> None:
    """A local file (the command line) that must be a PyTorch zip checkpoint: its size
    within ``limits.file_bytes`` and its first bytes the zip signature; nothing more is
    read here.

    Raises:
        UploadError: unreadable, empty, too large, a bare pickle or another format.
    """
    try:
        size = path.stat().st_size
        with path.open("rb") as f:
            head = f.read(4096)
    except OSError as exc:
        raise UploadError(f"{name}: cannot be read ({exc.strerror or exc})") from None
    check_file_size(name, size, limits.file_bytes)
    if head[:4] != ZIP_MAGIC:
        expect_format(name, head, "torch-zip")  # says what it looks like instead
        raise UploadError(f"{name}: truncated or corrupt (not readable as a PyTorch checkpoint)")


def safe_torch_load(name: str, data: bytes | Path, limits: Limits = BROWSER) -> dict:
    """``torch.load(weights_only=True)`` of a nanoGPT checkpoint, after the zip checks.

    ``data`` is the file's bytes (an upload) or the path of a local file (the command
    line), which is memory-mapped (``mmap=True``): only the tensors a caller touches are
    ever read, so a checkpoint's optimizer state stays unread pages of the file.

    Returns:
        The checkpoint dict; it has at least ``model`` and ``model_args``.

    Raises:
        UploadError: wrong format, zip bomb, a pickle that asks for anything but
            tensors and plain values ("refused: it tries to load 'posix.system'"),
            "truncated or corrupt", or no ``model``/``model_args``.
    """
    if isinstance(data, Path):
        expect_zip_file(name, data, limits)
    else:
        check_size(name, data, limits.file_bytes)
        expect_format(name, data, "torch-zip")
    check_zip(name, data, limits.unpacked_bytes)
    obj = load_weights_only(name, data)
    if not isinstance(obj, dict) or "model" not in obj or "model_args" not in obj:
        keys = ", ".join(map(str, list(obj)[:8])) if isinstance(obj, dict) else type(obj).__name__
        raise UploadError(
            f"{name}: not a nanoGPT checkpoint (it needs 'model' and 'model_args'; found {keys})"
        )
    check_state_dict(name, obj["model"], limits.params)
    return obj


_OPCODES = {op.code.encode("latin-1")[0]: op.name for op in pickletools.opcodes}


def _unpickling_refusal(error: str) -> str:
    """What torch's weights-only unpickler refused, in words: a global it asked for
    ("it tries to load 'posix.system'"), a pickle instruction it does not run (LONG4: a
    whole number of more than 255 bytes, such as n_embd = 2^(2^20)), else code."""
    if found := re.search(r"GLOBAL ([\w.]+)", error):
        what = f"'{found.group(1)}'"
    elif (found := re.search(r"Unsupported operand (\d+)", error)) is not None:
        op = _OPCODES.get(int(found.group(1)), f"opcode {found.group(1)}")
        if op == "LONG4":
            return (
                "it holds a whole number of more than 255 bytes (over 600 digits), which no "
                "config value or tensor needs; check its model_args"
            )
        return f"its pickle uses the {op} instruction, which tensors and plain values never need"
    else:
        what = "code"
    return f"it tries to load {what} (only tensors and plain values are allowed)"


def load_weights_only(name: str, data: bytes | Path) -> object:
    """``torch.load(weights_only=True, map_location="cpu")`` of a zip checkpoint already
    checked: bytes from memory, a local file (``Path``, the command line) memory-mapped
    (``mmap=True``). No class or function is ever loaded.

    Raises:
        UploadError: a pickle that asks for anything but tensors and plain values
            ("refused: it tries to load 'posix.system'"), or "truncated or corrupt".
    """
    import torch  # here, not at the top: a worker for ONNX graphs never pays its import

    source, mmap = (str(data), True) if isinstance(data, Path) else (BytesIO(data), False)
    try:
        return torch.load(source, weights_only=True, map_location="cpu", mmap=mmap)
    except pickle.UnpicklingError as exc:
        raise UploadError(f"{name}: refused: {_unpickling_refusal(str(exc))}") from None
    except Exception as exc:  # torch raises RuntimeError and others on damaged files
        raise UploadError(f"{name}: truncated or corrupt ({str(exc)[:200]})") from None


def check_state_dict(name: str, state: object, max_values: int = MAX_PARAMS) -> None:
    """Every entry of a checkpoint's ``model`` is a string key and a plain, dense tensor
    that owns its values, before anything compares or copies one.

    A tensor saved as a zero-stride view (``torch.zeros(1).expand(10**9)``) is a few bytes
    on disk but a billion values to any full-tensor operation; it is refused by comparing
    the values it claims with the bytes its storage holds.

    Raises:
        UploadError: "not a dict", "a key that is not a string", "a sparse tensor",
            "more values than its storage holds", or more than ``max_values`` values.
    """
    import torch

    if not isinstance(state, dict):
        raise UploadError(f"{name}: 'model' must be a dict of tensors")
    for key, tensor in state.items():
        if not isinstance(key, str):
            raise UploadError(
                f"{name}: 'model' has a key that is not a string ({type(key).__name__})"
            )
        if not isinstance(tensor, torch.Tensor):
            raise UploadError(f"{name}: '{key[:80]}' is not a tensor")
        if tensor.layout != torch.strided:
            raise UploadError(f"{name}: '{key[:80]}' is a sparse tensor; save dense weights")
        if tensor.numel() > max_values:
            raise UploadError(f"{name}: '{key[:80]}' holds more than {max_values:,} values")
        stored = tensor.untyped_storage().nbytes()
        if tensor.numel() * tensor.element_size() > stored:
            raise UploadError(
                f"{name}: '{key[:80]}' claims {tensor.numel():,} values but stores "
                f"{stored // max(tensor.element_size(), 1):,} (a broadcast view); save "
                "real tensors (tensor.contiguous())"
            )
