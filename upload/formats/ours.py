"""This project's ``.safetensors`` checkpoint (``models/checkpoint.py``), read in the worker."""

from __future__ import annotations

import torch
from safetensors import SafetensorError
from safetensors.torch import load as load_safetensors

from models.checkpoint import build_model
from models.config import ModelConfig
from models.transformer import Transformer
from upload.errors import UploadError
from upload.intake import safetensors_metadata
from upload.sizes import check_config_size
from upload.tokenizer_spec import check_spec, spec_from_json


def read_ours(data: bytes, name: str) -> tuple[Transformer, dict]:
    """Our checkpoint from bytes: the model and the spec of its tokenizer.

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
        raise UploadError(
            f"{name}: its metadata needs 'config' and 'tokenizer'; save it with models.train"
        )
    try:
        cfg = ModelConfig.from_json(metadata["config"])
    except RecursionError:
        raise UploadError(f"{name}: bad config: nested too deeply") from None
    except (ValueError, TypeError, AttributeError) as exc:
        raise UploadError(f"{name}: bad config: {exc}") from None
    check_config_size(name, cfg)
    spec = check_spec(spec_from_json(metadata["tokenizer"], name), cfg.vocab_size, name)
    try:
        tensors = load_safetensors(data)
    except (SafetensorError, ValueError, RuntimeError) as exc:
        raise UploadError(f"{name}: truncated or corrupt ({str(exc)[:200]})") from None
    state: dict[str, torch.Tensor] = dict(tensors)
    try:
        model = build_model(cfg, state, name)
    except ValueError as exc:
        raise UploadError(str(exc)) from None
    return model, spec
