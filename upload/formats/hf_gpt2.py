"""A local Hugging Face folder -> our ``Transformer``'s weights (worker side).

A folder as ``save_pretrained`` writes it for ``GPT2LMHeadModel`` (gpt2, distilgpt2, any
fine-tune): ``config.json`` (GPT2Config), ``model.safetensors`` or ``pytorch_model.bin``,
and ``tokenizer.json`` (GPT-2's byte-level BPE). GPT-2 is the architecture of
``models/transformer.py`` with learned positions, GELU-new (the tanh approximation) and
these differences of layout:

* ``Conv1D`` stores a linear layer's weight as (in, out), ``nn.Linear`` as (out, in): every
  ``c_attn``, ``c_proj`` and ``c_fc`` weight is transposed;
* ``c_attn`` (C, 3C) holds the query, key and value projections side by side: it is split
  into ``q_proj``, ``k_proj``, ``v_proj`` (C, C) each;
* the ``transformer.`` prefix is there for ``GPT2LMHeadModel`` and missing for
  ``GPT2Model`` files (the hub's gpt2 and distilgpt2); ``attn.bias`` and
  ``attn.masked_bias`` are the causal mask's buffers, not weights, and are dropped;
* ``lm_head.weight`` is the token embedding when ``tie_word_embeddings`` (the default),
  whatever the file holds, exactly as ``transformers`` ties it; otherwise it is required.

The files are read without running any of their code: ``config.json`` and
``tokenizer.json`` as JSON, ``model.safetensors`` with safetensors (a JSON header and raw
tensors, memory-mapped), ``pytorch_model.bin`` with ``torch.load(weights_only=True,
mmap=True)`` after its zip directory is checked. Sizes are bounded by ``limits`` (the
command line sizes them to the folder its user chose: ``upload.limits.local_file_limits``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

from models.config import ModelConfig
from upload.errors import UploadError
from upload.hf_advice import not_gpt2_folder
from upload.limits import MAX_JSON_BYTES, Limits
from upload.sizes import check_config_size

if TYPE_CHECKING:
    import torch

# config.json's activation_function -> ours: GPT-2's tanh approximation ("gelu_new", and
# "gelu_pytorch_tanh", the same function computed by torch) or the exact GELU.
ACTIVATIONS = {"gelu_new": "gelu_new", "gelu_pytorch_tanh": "gelu_new", "gelu": "gelu"}
# GPT2Config's defaults for keys a config.json may leave out (transformers' GPT2Config).
DEFAULTS = {
    "activation_function": "gelu_new",
    "layer_norm_epsilon": 1e-5,
    "n_inner": None,
    "scale_attn_weights": True,
    "scale_attn_by_inverse_layer_idx": False,
    "reorder_and_upcast_attn": False,
    "add_cross_attention": False,
    "tie_word_embeddings": True,
}
SIZES = ("n_layer", "n_head", "n_embd", "n_positions", "vocab_size")
BUFFER = re.compile(r"h\.\d+\.attn\.(bias|masked_bias)")  # the causal mask, not weights
CONV1D = re.compile(r"h\.\d+\.(attn\.c_attn|attn\.c_proj|mlp\.c_fc|mlp\.c_proj)\.weight")


def _text(path: Path, name: str) -> str:
    """A local UTF-8 file of at most MAX_JSON_BYTES.

    Raises:
        UploadError: unreadable, too large, not UTF-8.
    """
    try:
        if path.stat().st_size > MAX_JSON_BYTES:
            raise UploadError(f"{name}: refused: larger than {MAX_JSON_BYTES // 2**20} MB")
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UploadError(f"{name}: cannot be read ({exc})") from None


def _json(path: Path, name: str) -> dict:
    """A JSON object from a local file of at most MAX_JSON_BYTES.

    Raises:
        UploadError: unreadable, too large, not JSON, nested too deeply, not an object.
    """
    text = _text(path, name)
    try:
        data = json.loads(text)
    except RecursionError:
        raise UploadError(f"{name}: refused: nested too deeply") from None
    except ValueError as exc:
        raise UploadError(f"{name}: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise UploadError(f"{name}: not a JSON object")
    return data


def gpt2_config(data: dict, name: str, limits: Limits) -> ModelConfig:
    """``config.json`` (GPT2Config) -> our config: softmax attention, learned positions,
    biases everywhere, ``d_mlp`` = ``n_inner`` or 4 * ``n_embd``, the MLP's GELU and
    LayerNorm's epsilon as the file says, weights tied as ``tie_word_embeddings`` says.

    Raises:
        UploadError: naming the file and the key: another model type, a missing or
            non-positive size, an activation other than GELU or GELU-new, attention
            that is not plain scaled dot-product (``scale_attn_weights`` false,
            ``scale_attn_by_inverse_layer_idx`` or ``reorder_and_upcast_attn`` true,
            cross-attention), or a config too large for ``limits``.
    """
    model_type = data.get("model_type", "gpt2")
    architectures = data.get("architectures") or ["GPT2LMHeadModel"]
    if model_type != "gpt2" or not {"GPT2LMHeadModel", "GPT2Model"} & set(map(str, architectures)):
        folder = name.rsplit("/", 1)[0] if "/" in name else "path/to/folder"
        archs = ", ".join(map(str, architectures))[:80]
        raise UploadError(not_gpt2_folder(name, str(model_type)[:40], archs, folder))
    for key in SIZES:
        if type(data.get(key)) is not int or data[key] <= 0:
            raise UploadError(f"{name}: '{key}' must be a positive integer, got {data.get(key)!r}")
    cfg = {**DEFAULTS, **{k: v for k, v in data.items() if k in DEFAULTS and v is not None}}
    cfg["n_inner"] = data.get("n_inner")
    activation = ACTIVATIONS.get(cfg["activation_function"])
    if activation is None:
        raise UploadError(
            f"{name}: activation_function {str(cfg['activation_function'])[:40]!r} is not "
            "supported; GPT-2's 'gelu_new' and the exact 'gelu' are"
        )
    for key, wanted in (
        ("scale_attn_weights", True),
        ("scale_attn_by_inverse_layer_idx", False),
        ("reorder_and_upcast_attn", False),
        ("add_cross_attention", False),
    ):
        if cfg[key] is not wanted:
            raise UploadError(
                f"{name}: '{key}' is {json.dumps(cfg[key])}; only GPT-2's plain attention "
                f"(softmax(QKᵀ/√d_head)) is converted, with '{key}': {json.dumps(wanted)}"
            )
    n_inner = cfg["n_inner"]
    if n_inner is not None and (type(n_inner) is not int or n_inner <= 0):
        raise UploadError(f"{name}: 'n_inner' must be a positive integer or null")
    try:
        ours = ModelConfig(
            vocab_size=data["vocab_size"],
            n_layer=data["n_layer"],
            n_head=data["n_head"],
            d_model=data["n_embd"],
            context_length=data["n_positions"],
            attention="softmax",
            position_scheme="learned",
            d_mlp=n_inner or 4 * data["n_embd"],
            bias=True,
            ln_bias=True,
            tie_weights=bool(cfg["tie_word_embeddings"]),
            activation=activation,
            ln_eps=cfg["layer_norm_epsilon"],
        )
    except ValueError as exc:
        message = str(exc).replace("d_model", "n_embd").replace("ln_eps", "layer_norm_epsilon")
        raise UploadError(f"{name}: {message}") from None
    check_config_size(name, ours, limits)
    return ours


def _split_qkv(key: str, tensor: torch.Tensor, C: int, name: str) -> dict[str, torch.Tensor]:
    """``c_attn`` weight (C, 3C) or bias (3C,) -> q/k/v projections: weights (C, C) as
    ``nn.Linear`` stores them (out, in), biases (C,)."""
    is_weight = key.endswith(".weight")
    if tensor.shape[-1] != 3 * C or tensor.dim() != (2 if is_weight else 1):
        raise UploadError(
            f"{name}: {key} has shape {tuple(tensor.shape)}; n_embd = {C} needs "
            f"{(C, 3 * C) if is_weight else (3 * C,)} (query, key and value side by side)"
        )
    parts = tensor.split(C, dim=-1)  # 3 x (C, C) (in, out), or 3 x (C,)
    ours = re.sub(r"^h\.(\d+)\.attn\.c_attn", r"blocks.\1.attn.{}_proj", key)
    return {
        ours.format(p): (t.t().contiguous() if is_weight else t)  # (out, in) = (C, C)
        for p, t in zip("qkv", parts, strict=True)
    }


def our_state(state: dict[str, torch.Tensor], cfg: ModelConfig, name: str) -> dict:
    """GPT-2 names and layout -> ours (see the module docstring): ``transformer.``
    stripped, ``h.{i}`` -> ``blocks.{i}``, ``attn.c_proj`` -> ``attn.o_proj``, Conv1D
    weights transposed to (out, in), ``c_attn`` split in three; a tied ``lm_head.weight``
    dropped (the model uses ``wte.weight``). Values are float32.

    Raises:
        UploadError: a misshapen ``c_attn``, or no ``lm_head.weight`` in an untied model.
    """
    out = {}
    for key, tensor in state.items():
        key = key.removeprefix("transformer.")
        tensor = tensor.float()  # float16 / bfloat16 fine-tunes: float32, as ours
        if key == "lm_head.weight" and cfg.tie_weights:
            continue  # transformers ties it to wte, whatever the file holds
        if ".attn.c_attn." in key:
            out.update(_split_qkv(key, tensor, cfg.d_model, name))
            continue
        if CONV1D.fullmatch(key) and tensor.dim() == 2:
            tensor = tensor.t().contiguous()  # Conv1D (in, out) -> nn.Linear (out, in)
        key = re.sub(r"^h\.(\d+)\.", r"blocks.\1.", key).replace(".attn.c_proj.", ".attn.o_proj.")
        out[key] = tensor
    return check_unembedding(out, cfg, name)


def check_unembedding(state: dict, cfg: ModelConfig, name: str) -> dict:
    """``state`` as it is, when an untied model has its ``lm_head.weight`` (any family's
    folder: a tied one is left out, the model uses ``wte.weight``).

    Raises:
        UploadError: no ``lm_head.weight`` while config.json says the weights are untied.
    """
    if not cfg.tie_weights and "lm_head.weight" not in state:
        raise UploadError(
            f"{name}: has no lm_head.weight, and config.json says tie_word_embeddings: false"
        )
    return state


def check_weights(cfg: ModelConfig, state: dict, name: str, names=None) -> None:
    """Every weight ``Transformer(cfg)`` has, of its shape, finite; nothing else. The names
    and shapes come from the model laid out on the meta device
    (:func:`models.shapes.parameter_shapes`: no memory, no values).

    Raises:
        UploadError: naming the weights in the file's terms (``names``: our names ->
            theirs; GPT-2's by default): missing, unexpected, of another shape, or
            holding NaN or inf.
    """
    import torch

    from models.shapes import parameter_shapes

    names = names or gpt2_names
    expected = parameter_shapes(cfg)
    if cfg.tie_weights:
        expected.pop("lm_head.weight")
    missing = sorted(set(expected) - set(state))
    unexpected = sorted(set(state) - set(expected))
    for what, keys in (("missing weights", missing), ("unexpected weights", unexpected)):
        if keys:
            raise UploadError(f"{name}: {what}: {', '.join(names(keys)[:8])}")
    for key, tensor in state.items():
        if tuple(tensor.shape) != expected[key]:
            raise UploadError(
                f"{name}: {names([key])[0]} has shape {tuple(tensor.shape)} after "
                f"conversion; config.json needs {expected[key]}"
            )
        if not torch.isfinite(tensor).all():
            raise UploadError(f"{name}: {names([key])[0]} contains NaN or inf")


def gpt2_names(keys: list[str]) -> list[str]:
    """Our parameter names -> GPT-2's, each once (messages name the key in the file)."""
    names = []
    for key in keys:
        key = re.sub(r"\.attn\.[qkv]_proj\.", ".attn.c_attn.", key)
        key = re.sub(r"^blocks\.(\d+)\.", r"h.\1.", key).replace(".attn.o_proj.", ".attn.c_proj.")
        names.append(key)
    return list(dict.fromkeys(names))
