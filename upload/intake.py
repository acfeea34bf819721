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
import zipfile
from io import BytesIO
from pathlib import Path, PurePath

from upload.errors import UploadError
from upload.limits import (
    MAX_FILES,
    MAX_ZIP_MEMBERS,
    MAX_ZIP_RATIO,
    MAX_ZIP_UNCOMPRESSED,
)
from upload.onnx_wire import check_wire
from upload.sizes import shrink_hint

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
