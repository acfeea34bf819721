"""Pickled checkpoints opened safely (worker side): plain-data unpickling for nanoGPT's
``meta.pkl``, ``torch.load(weights_only=True)`` after the zip checks of
``upload/intake.py``, and the checks of a checkpoint's state dict before anything
copies a tensor. Every refusal is an :class:`UploadError` naming the file.
"""

from __future__ import annotations

import pickle
import pickletools
import re
from io import BytesIO
from pathlib import Path

from upload.errors import LibraryRefusal, UploadError
from upload.intake import ZIP_MAGIC, check_zip, expect_format
from upload.limits import BROWSER, MAX_PARAMS, Limits
from upload.sizes import check_file_size, check_size


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
        raise LibraryRefusal(
            f"{name}: truncated or corrupt (torch.load cannot read it; its message is in "
            "the server's log); save the checkpoint again with torch.save",
            exc,
        ) from None


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
