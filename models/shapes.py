"""The names and shapes of ``Transformer(cfg)``'s weights, without building its values.

The model is laid out on the meta device (no memory, whatever its size) with
``torch.nn.init``'s functions skipped: a meta tensor has no values to fill, and filling
one runs torch's reference implementation of the fill, whose first call imports 822
modules (1.1 s of CPU: ``torch._dynamo`` and what it needs). The layout alone takes a few
milliseconds. An upload worker reading a checkpoint or a Hugging Face folder checks the
weights against these shapes before it copies any (``models.checkpoint.check_state``,
``upload.formats.hf_gpt2.check_weights``).
"""

from __future__ import annotations

import torch
from torch.overrides import TorchFunctionMode

from models.config import ModelConfig
from models.transformer import Transformer


class _SkipInit(TorchFunctionMode):
    """Calls of ``torch.nn.init``'s functions return their tensor untouched; every other
    function runs as it would."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if getattr(func, "__module__", None) == "torch.nn.init":
            return args[0] if args else kwargs["tensor"]
        return func(*args, **kwargs)


def parameter_shapes(cfg: ModelConfig) -> dict[str, tuple[int, ...]]:
    """Name -> shape of every entry of ``Transformer(cfg).state_dict()`` (weights and
    persistent buffers), e.g. ``"wte.weight": (vocab_size, d_model)``.

    Raises:
        ValueError: as ``Transformer(cfg)`` for a config it cannot build.
    """
    with torch.device("meta"), _SkipInit():
        model = Transformer(cfg)
    return {name: tuple(value.shape) for name, value in model.state_dict().items()}
