"""Local Hugging Face folders of today's decoder families -> our ``Transformer`` (worker side).

``llama``, ``mistral`` and ``qwen2`` (``LlamaForCausalLM`` and its kin) are one
architecture in our terms: RMSNorm, rotary positions, grouped-query attention and a
SwiGLU MLP, with Qwen2's q/k/v biases and Mistral's sliding window. ``gpt_neox``
(Pythia) has LayerNorm, partial rotary positions, a fused q/k/v per head and the
parallel residual. Each config key is read into :class:`~models.config.ModelConfig`
(:func:`family_config`), each weight renamed (:func:`our_state`); what our model does not
implement is refused by name: rope scaling other than "linear", Qwen2's per-layer
sliding window, a head_dim other than hidden_size / heads, Llama's attention bias without
its MLP bias. The files are read as GPT-2 folders are (``upload/formats/hf_gpt2.py``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from models.config import ModelConfig
from upload.errors import UploadError
from upload.formats.hf_gpt2 import check_unembedding
from upload.limits import MAX_ONNX_DIM, Limits
from upload.sizes import check_config_size

if TYPE_CHECKING:
    import torch

LLAMA_LIKE = ("llama", "mistral", "qwen2")
FAMILIES = (*LLAMA_LIKE, "gpt_neox")
ACTIVATIONS = {"silu": "silu", "gelu": "gelu", "gelu_new": "gelu_new",
               "gelu_pytorch_tanh": "gelu_new"}  # fmt: skip
SIZES = ("hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
         "vocab_size")  # fmt: skip
# (their pattern, ours) for each family; the buffers (rotary inverse frequencies, causal
# masks) are not weights and are dropped.
BUFFER = re.compile(r"(rotary_emb\.inv_freq|attention\.(bias|masked_bias))$")
# Their name's prefix -> ours, {i} the layer.
RENAMES = {
    "llama": (
        ("model.embed_tokens.", "wte."),
        ("model.norm.", "ln_f."),
        ("model.layers.{i}.self_attn.", "blocks.{i}.attn."),
        ("model.layers.{i}.mlp.gate_proj.", "blocks.{i}.mlp.c_gate."),
        ("model.layers.{i}.mlp.up_proj.", "blocks.{i}.mlp.c_fc."),
        ("model.layers.{i}.mlp.down_proj.", "blocks.{i}.mlp.c_proj."),
        ("model.layers.{i}.input_layernorm.", "blocks.{i}.ln_1."),
        ("model.layers.{i}.post_attention_layernorm.", "blocks.{i}.ln_2."),
    ),
    "gpt_neox": (
        ("gpt_neox.embed_in.", "wte."),
        ("gpt_neox.final_layer_norm.", "ln_f."),
        ("embed_out.", "lm_head."),
        ("gpt_neox.layers.{i}.attention.query_key_value.", "blocks.{i}.attn.qkv."),
        ("gpt_neox.layers.{i}.attention.dense.", "blocks.{i}.attn.o_proj."),
        ("gpt_neox.layers.{i}.mlp.dense_h_to_4h.", "blocks.{i}.mlp.c_fc."),
        ("gpt_neox.layers.{i}.mlp.dense_4h_to_h.", "blocks.{i}.mlp.c_proj."),
        ("gpt_neox.layers.{i}.input_layernorm.", "blocks.{i}.ln_1."),
        ("gpt_neox.layers.{i}.post_attention_layernorm.", "blocks.{i}.ln_2."),
    ),
}


def _renamed(key: str, pairs, forward: bool = True) -> str:
    """``key`` with the first matching prefix of ``pairs`` replaced (their -> our names,
    or back when not ``forward``); {i} matches a layer number."""
    for theirs, ours in pairs:
        source, target = (theirs, ours) if forward else (ours, theirs)
        pattern = "^" + re.escape(source).replace(re.escape("{i}"), r"(\d+)")
        match = re.match(pattern, key)
        if match:
            head = target.replace("{i}", match[1]) if match.groups() else target
            return head + key[match.end() :]
    return key


FUSED_QKV = re.compile(r"^blocks\.(\d+)\.attn\.qkv\.(weight|bias)$")  # after renaming


def _family(model_type: str) -> str:
    return "llama" if model_type in LLAMA_LIKE else model_type


def _positive(data: dict, key: str, name: str) -> int:
    if type(data.get(key)) is not int or data[key] <= 0:
        raise UploadError(f"{name}: '{key}' must be a positive integer, got {data.get(key)!r}")
    return data[key]


def _rope(data: dict, name: str) -> dict:
    """θ, linear scale and rotary fraction from ``rope_parameters`` (transformers v5) or
    the older ``rope_theta`` / ``rope_scaling`` / ``rotary_pct`` / ``rotary_emb_base``.

    Raises:
        UploadError: a rope type other than "default" or "linear", by name.
    """
    params = data.get("rope_parameters") or {}
    scaling = data.get("rope_scaling") or {}
    if not isinstance(params, dict) or not isinstance(scaling, dict):
        raise UploadError(f"{name}: 'rope_parameters' must be a JSON object")
    kind = params.get("rope_type") or scaling.get("rope_type") or scaling.get("type") or "default"
    if kind not in ("default", "linear"):
        raise UploadError(
            f"{name}: rope type {str(kind)[:30]!r} is not implemented; rotary positions "
            "are converted with the default rope or 'linear' scaling"
        )
    theta = params.get("rope_theta", data.get("rope_theta", data.get("rotary_emb_base", 10000.0)))
    factor = (params.get("factor") or scaling.get("factor") or 1.0) if kind == "linear" else 1.0
    fraction = params.get("partial_rotary_factor", data.get("rotary_pct", 1.0))
    for key, value in (
        ("rope_theta", theta),
        ("factor", factor),
        ("partial_rotary_factor", fraction),
    ):
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise UploadError(f"{name}: '{key}' must be a positive number, got {value!r}")
    return {"rope_theta": float(theta), "rope_scale": float(factor), "fraction": float(fraction)}


def family_config(data: dict, name: str, limits: Limits) -> ModelConfig:
    """``config.json`` of a family in :data:`FAMILIES` -> our config. Rotary positions
    have no position table, so a context past what the app analyses (MAX_ONNX_DIM,
    65,536 tokens: Mistral's and Qwen2's 131,072) is taken as that.

    Raises:
        UploadError: naming the file and the key: a missing or non-positive size, an
            unsupported activation, rope type or head_dim, Qwen2's per-layer sliding
            window, Llama's attention bias alone, or a config too large for ``limits``.
    """
    model_type = data.get("model_type")
    C, M, L, H, V = (_positive(data, key, name) for key in SIZES)
    kv = data.get("num_key_value_heads") or H
    if type(kv) is not int or kv <= 0 or H % kv:
        raise UploadError(f"{name}: 'num_key_value_heads' must divide num_attention_heads={H}")
    if C % H or data.get("head_dim") not in (None, C // H):
        raise UploadError(
            f"{name}: head_dim {data.get('head_dim')!r} is not hidden_size / "
            f"num_attention_heads = {C / H:g}; only that layout is converted"
        )
    act = ACTIVATIONS.get(str(data.get("hidden_act", "silu")))
    if act is None:
        raise UploadError(
            f"{name}: hidden_act {str(data.get('hidden_act'))[:30]!r} is not supported"
        )
    rope = _rope(data, name)
    fields = {"vocab_size": V, "n_layer": L, "n_head": H, "d_model": C, "d_mlp": M,
              "context_length": min(_positive(data, "max_position_embeddings", name), MAX_ONNX_DIM),
              "attention": "softmax", "position_scheme": "rotary", "activation": act,
              "n_kv_head": kv if kv != H else None, "rope_theta": rope["rope_theta"],
              "rope_scale": rope["rope_scale"],
              "tie_weights": bool(data.get("tie_word_embeddings", False))}  # fmt: skip
    if model_type == "gpt_neox":
        d_rot = int(C // H * rope["fraction"])
        fields.update(norm="layernorm", ln_eps=data.get("layer_norm_eps", 1e-5),
                      bias=bool(data.get("attention_bias", True)),
                      parallel_residual=bool(data.get("use_parallel_residual", True)),
                      rotary_dim=d_rot if d_rot != C // H else None)  # fmt: skip
    else:
        fields.update(
            norm="rmsnorm",
            ln_eps=data.get("rms_norm_eps", 1e-6),
            gated_mlp=True,
            **_llama_biases(data, name),
        )
        fields["sliding_window"] = _window(data, name)
    try:
        ours = ModelConfig(**fields)
    except ValueError as exc:
        raise UploadError(f"{name}: {exc}") from None
    check_config_size(name, ours, limits)
    return ours


def _llama_biases(data: dict, name: str) -> dict:
    """Biases: Qwen2 has them on q, k, v only; Llama's ``attention_bias`` with ``mlp_bias``."""
    if data.get("model_type") == "qwen2":
        return {"bias": False, "qkv_bias": True}
    attention, mlp = bool(data.get("attention_bias")), bool(data.get("mlp_bias"))
    if attention != mlp:
        raise UploadError(
            f"{name}: 'attention_bias' {str(attention).lower()} with 'mlp_bias' "
            f"{str(mlp).lower()} is not converted (both true or both false are)"
        )
    return {"bias": attention}


def _window(data: dict, name: str) -> int | None:
    """Mistral's ``sliding_window`` (every layer); Qwen2's is per layer and refused."""
    if data.get("model_type") == "qwen2":
        if data.get("use_sliding_window"):
            raise UploadError(
                f"{name}: 'use_sliding_window' true (a window on some layers) is not "
                "converted; Qwen2 with full attention on every layer is"
            )
        return None
    window = data.get("sliding_window") if data.get("model_type") == "mistral" else None
    if window is not None and (type(window) is not int or window <= 0):
        raise UploadError(f"{name}: 'sliding_window' must be a positive integer or null")
    return window


def _split_fused(layer: str, part: str, tensor, cfg: ModelConfig, name: str) -> dict:
    """GPT-NeoX's query_key_value, rows grouped per head as (H, 3, d_head) -> q, k, v."""
    H, D, C = cfg.n_head, cfg.d_head, cfg.d_model
    if tensor.shape[0] != 3 * C:
        raise UploadError(
            f"{name}: layer {layer} query_key_value.{part} has {tensor.shape[0]} rows, not {3 * C}"
        )
    grouped = tensor.reshape(H, 3, D, *tensor.shape[1:])  # (H, 3, D[, C])
    return {f"blocks.{layer}.attn.{p}_proj.{part}": grouped[:, i].reshape(C, *tensor.shape[1:])
            for i, p in enumerate("qkv")}  # fmt: skip


def our_state(state: dict[str, torch.Tensor], cfg: ModelConfig, model_type: str, name: str) -> dict:
    """Their names and layout -> ours, float32, buffers dropped; a tied ``lm_head.weight``
    dropped (the model uses ``wte.weight``).

    Raises:
        UploadError: a misshapen fused q/k/v, or no ``lm_head.weight`` in an untied model.
    """
    family, out = _family(model_type), {}
    for key, tensor in state.items():
        if BUFFER.search(key):
            continue
        tensor = tensor.float()  # (…) float16 / bfloat16 files: float32, as ours
        key = _renamed(key, RENAMES[family])
        fused = FUSED_QKV.match(key)
        if fused:
            out.update(_split_fused(fused[1], fused[2], tensor, cfg, name))
            continue
        if key == "lm_head.weight" and cfg.tie_weights:
            continue
        out[key] = tensor
    return check_unembedding(out, cfg, name)


def their_names(keys: list[str], model_type: str) -> list[str]:
    """Our parameter names -> the file's (messages name the key in the file), each once."""
    family = _family(model_type)
    if family == "gpt_neox":
        keys = [re.sub(r"\.attn\.[qkv]_proj\.", ".attn.qkv.", k) for k in keys]
    return list(dict.fromkeys(_renamed(k, RENAMES[family], forward=False) for k in keys))
