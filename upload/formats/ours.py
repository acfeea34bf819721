"""This project's ``.safetensors`` checkpoint (``models/checkpoint.py``), read in the worker."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from upload.errors import LibraryRefusal, UploadError
from upload.hf_advice import hf_checkpoint
from upload.intake import safetensors_metadata
from upload.limits import BROWSER, Limits
from upload.tokenizer_spec import read_metadata
from upload.training_info import plain_training

if TYPE_CHECKING:
    from models.transformer import Transformer


def read_ours(data: bytes, name: str, limits: Limits = BROWSER) -> tuple[Transformer, dict, dict]:
    """Our checkpoint from bytes: the model, the spec of its tokenizer and the plain part
    of its ``training`` metadata (``upload.training_info.plain_training``; a converted
    nanoGPT checkpoint's iteration, best validation loss and training settings).

    The header is read first (JSON only): it must end exactly where the weights do,
    carry a ``config`` that fits ``check_config_size`` and a tokenizer this app builds.
    Only then are the tensors read (safetensors' own parser, no code) and loaded
    strictly (names, shapes, float, finite).

    Raises:
        UploadError: naming the file: truncated, missing metadata, a config that is not
            an object, a foreign tokenizer, an id >= vocab_size, or weights that do not
            fit the config.
    """
    metadata = safetensors_metadata(name, data)
    if "config" not in metadata or "tokenizer" not in metadata:
        header = json.loads(data[8 : 8 + int.from_bytes(data[:8], "little")])  # read above
        raise UploadError(
            hf_checkpoint(name, [t for t in header if t != "__metadata__"])
            or f"{name}: its metadata needs 'config' and 'tokenizer'; save it with training.train"
        )
    cfg, spec = read_metadata(metadata["config"], metadata["tokenizer"], name, limits)
    # torch only now (2 CPU-seconds to import): a file refused above never pays for it
    import torch
    from safetensors import SafetensorError
    from safetensors.torch import load as load_safetensors

    from models.checkpoint import build_model

    try:
        tensors = load_safetensors(data)
    except (SafetensorError, ValueError, RuntimeError) as exc:
        raise LibraryRefusal(
            f"{name}: truncated or corrupt (not readable as a safetensors checkpoint); "
            "export it again with this project's training script",
            exc,
        ) from None
    state: dict[str, torch.Tensor] = dict(tensors)
    try:
        model = build_model(cfg, state, name)
    except ValueError as exc:
        raise UploadError(str(exc)) from None
    return model, spec, _training(metadata.get("training", "{}"))


def _training(text: str) -> dict:
    """The plain part of a ``training`` metadata string; {} when it is not readable JSON."""
    if len(text) > 1 << 20:
        return {}
    try:
        return plain_training(json.loads(text))
    except (ValueError, RecursionError):
        return {}
