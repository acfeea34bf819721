"""A local Hugging Face GPT-Neo folder (``GPTNeoForCausalLM``) -> our ``Transformer``.

GPT-Neo is GPT-2's block (learned positions, LayerNorm, GELU-new) with three differences
our model takes as they are named in ``models/``:

* its layers alternate "global" attention and "local" attention, a sliding window of
  ``window_size`` keys (``ModelConfig.sliding_window`` on ``window_layers``);
* q, k and v have no biases (``qkv_bias`` false), its output and MLP layers do;
* its scores are **not** divided by √d_head (``softmax(QKᵀ)``). The converter multiplies
  W_Q by √d_head, so our scores q·k/√d_head are GPT-Neo's exactly and every view reads
  them as any model's: the q the app shows is √d_head times GPT-Neo's query.

Its linear layers are ``nn.Linear`` (out, in), not GPT-2's Conv1D.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

from models.config import ModelConfig
from upload.errors import UploadError
from upload.formats.hf_gpt2 import check_unembedding
from upload.limits import Limits
from upload.sizes import check_config_size

if TYPE_CHECKING:
    import torch

ACTIVATIONS = {"gelu_new": "gelu_new", "gelu": "gelu", "gelu_pytorch_tanh": "gelu_new"}
SIZES = ("hidden_size", "num_layers", "num_heads", "max_position_embeddings", "vocab_size")
BUFFER = re.compile(r"attn\.attention\.(bias|masked_bias)$")
RENAMES = ((r"^transformer\.h\.(\d+)\.attn\.attention\.out_proj\.", r"blocks.\1.attn.o_proj."),
           (r"^transformer\.h\.(\d+)\.attn\.attention\.", r"blocks.\1.attn."),
           (r"^transformer\.h\.(\d+)\.", r"blocks.\1."), (r"^transformer\.", ""))  # fmt: skip


def _layers(data: dict, n_layer: int, name: str) -> list[str]:
    """``attention_layers``, or ``attention_types`` ([[kinds, repeat], ...]) expanded."""
    layers = data.get("attention_layers")
    if not layers:
        layers = [kind for kinds, repeat in data.get("attention_types") or [] for _ in range(repeat)
                  for kind in kinds]  # fmt: skip
    if len(layers) != n_layer or not set(layers) <= {"global", "local"}:
        raise UploadError(
            f"{name}: 'attention_layers' must name 'global' or 'local' for each of the "
            f"{n_layer} layers"
        )
    return layers


def gpt_neo_config(data: dict, name: str, limits: Limits) -> ModelConfig:
    """``config.json`` (GPTNeoConfig) -> our config.

    Raises:
        UploadError: naming the file and the key: a missing or non-positive size, an
            unsupported activation, attention layers that are neither global nor local,
            or a config too large for ``limits``.
    """
    for key in SIZES:
        if type(data.get(key)) is not int or data[key] <= 0:
            raise UploadError(f"{name}: '{key}' must be a positive integer, got {data.get(key)!r}")
    C, L = data["hidden_size"], data["num_layers"]
    act = ACTIVATIONS.get(str(data.get("activation_function", "gelu_new")))
    if act is None:
        raise UploadError(
            f"{name}: activation_function {str(data.get('activation_function'))[:30]!r} is not supported"
        )
    layers = _layers(data, L, name)
    local = tuple(i for i, kind in enumerate(layers) if kind == "local")
    try:
        ours = ModelConfig(
            vocab_size=data["vocab_size"], n_layer=L, n_head=data["num_heads"], d_model=C,
            context_length=data["max_position_embeddings"], position_scheme="learned",
            d_mlp=data.get("intermediate_size") or 4 * C, bias=True, qkv_bias=False,
            activation=act, ln_eps=data.get("layer_norm_epsilon", 1e-5),
            tie_weights=bool(data.get("tie_word_embeddings", True)),
            sliding_window=data.get("window_size", 256) if local else None,
            window_layers=local if local else None,
        )  # fmt: skip
    except ValueError as exc:
        raise UploadError(f"{name}: {exc}") from None
    check_config_size(name, ours, limits)
    return ours


def our_state(state: dict[str, torch.Tensor], cfg: ModelConfig, name: str) -> dict:
    """GPT-Neo names -> ours, float32, buffers dropped, W_Q times √d_head (module
    docstring); a tied ``lm_head.weight`` dropped.

    Raises:
        UploadError: no ``lm_head.weight`` in an untied model.
    """
    out = {}
    for key, tensor in state.items():
        if BUFFER.search(key):
            continue
        for pattern, ours in RENAMES:
            key = re.sub(pattern, ours, key, count=1)
        tensor = tensor.float()  # (…) float32, as ours
        if key.endswith(".attn.q_proj.weight"):
            tensor = tensor * math.sqrt(cfg.d_head)  # (C, C): GPT-Neo does not scale scores
        if key == "lm_head.weight" and cfg.tie_weights:
            continue
        out[key] = tensor
    return check_unembedding(out, cfg, name)


def their_names(keys: list[str]) -> list[str]:
    """Our parameter names -> GPT-Neo's, each once."""
    names = []
    for key in keys:
        key = re.sub(
            r"^blocks\.(\d+)\.attn\.o_proj\.", r"transformer.h.\1.attn.attention.out_proj.", key
        )
        key = re.sub(r"^blocks\.(\d+)\.attn\.", r"transformer.h.\1.attn.attention.", key)
        key = re.sub(r"^blocks\.(\d+)\.", r"transformer.h.\1.", key)
        names.append(key if key.startswith(("transformer.", "lm_head")) else "transformer." + key)
    return list(dict.fromkeys(names))
