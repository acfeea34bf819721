"""Local weights files read without running any of their code (worker side).

The command line's files were chosen by its user on their own disk, so they are read by
path, not sent as bytes, and their sizes are bounded by ``limits`` sized to them
(``upload.limits.local_file_limits``):

* ``.safetensors``: a JSON header and raw tensors, memory-mapped by safetensors; a tensor
  is read when it is used;
* a ``torch.save`` zip (``pytorch_model.bin``): ``torch.load(weights_only=True, mmap=True)``
  (no class or function is ever loaded) after its zip directory is checked.
"""

from __future__ import annotations

import math
import re
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

from upload.errors import UploadError
from upload.limits import MAX_ZIP_MEMBERS, Limits
from upload.pickles import check_state_dict, load_weights_only

if TYPE_CHECKING:
    import torch

FLOAT_DTYPES = ("F32", "F16", "BF16", "F64")


def read_safetensors(
    path: Path, name: str, limits: Limits, skip: re.Pattern | None = None
) -> dict[str, torch.Tensor]:
    """The tensors of a local ``.safetensors`` file by name, memory-mapped: at most
    ``limits.params`` values in all, float dtypes only; those whose name ``skip`` finds
    (buffers of any dtype, such as GPT-2's causal mask) are left out.

    Raises:
        UploadError: unreadable or corrupt, a tensor that is not float, too many values.
    """
    from safetensors import SafetensorError, safe_open

    try:
        with safe_open(str(path), framework="pt") as f:
            shapes = {k: (f.get_slice(k).get_dtype(), f.get_slice(k).get_shape()) for k in f.keys()}
            total = sum(math.prod(shape) for _, shape in shapes.values())
            if total > limits.params:
                raise UploadError(f"{name}: refused: {total:,} values (limit {limits.params:,})")
            for key, (dtype, _) in shapes.items():
                if dtype not in FLOAT_DTYPES and not (skip and skip.search(key)):
                    raise UploadError(f"{name}: '{key[:80]}' is {dtype}, not a float tensor")
            return {k: f.get_tensor(k) for k in shapes if not (skip and skip.search(k))}
    except (SafetensorError, OSError, ValueError, RuntimeError) as exc:
        if isinstance(exc, UploadError):
            raise
        raise UploadError(f"{name}: truncated or corrupt ({str(exc)[:200]})") from None


def read_torch_zip(path: Path, name: str, limits: Limits) -> dict[str, torch.Tensor]:
    """A local ``torch.save`` of a state dict (``pytorch_model.bin``) read with
    ``torch.load(weights_only=True, mmap=True)``, after its zip directory is checked:
    at most MAX_ZIP_MEMBERS members, all stored uncompressed (as ``torch.save`` writes
    them; nothing to decompress, so nothing to bomb), none past the file's end.

    Raises:
        UploadError: not a zip (the pre-1.6 format), a refused zip, a pickle that asks for
            anything but tensors ("refused: it tries to load ..."), or not a state dict.
    """
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise UploadError(
            f"{name}: not a PyTorch zip checkpoint ({str(exc)[:80]}); re-save it with a recent "
            "torch, or save the model with save_pretrained (model.safetensors)"
        ) from None
    if len(members) > MAX_ZIP_MEMBERS:
        raise UploadError(f"{name}: refused: {len(members)} files inside (limit {MAX_ZIP_MEMBERS})")
    size = path.stat().st_size
    if any(m.compress_type != zipfile.ZIP_STORED or m.file_size > size for m in members):
        raise UploadError(f"{name}: refused: compressed members (torch.save stores them plainly)")
    state = load_weights_only(name, path)
    if isinstance(state, dict) and isinstance(state.get("state_dict"), dict):
        state = state["state_dict"]
    check_state_dict(name, state, limits.params)
    return state
