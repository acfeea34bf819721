"""Hugging Face GPT-2 models exported to ONNX the ways people do (``transformers`` is a
test-only oracle; nothing is downloaded: the config is built here, the weights random).

:func:`hf_gpt2` builds a small random ``GPT2LMHeadModel`` (2 layers, 4 heads); its
vocabulary is :func:`tests.helpers.gpt2_tokenizer.gpt2_style_tokenizer`'s 300 ids.
:func:`export` writes it with ``torch.onnx.export``, by the TorchScript exporter
(``dynamo=False``, its default opset) or the dynamo exporter (opset 18), with or without
an ``attention_mask`` input, a dynamic or a fixed token axis, and where asked with the
dynamo exporter's default external data (``model.onnx.data`` beside the graph).
:func:`reference` is transformers' own ``output_attentions`` (eager attention).
"""

from __future__ import annotations

import collections
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import torch

from tests.helpers.gpt2_tokenizer import gpt2_style_tokenizer

V = 300  # gpt2_style_tokenizer's ids (<|endoftext|> the last)


@dataclass(frozen=True)
class Export:
    """How one graph is exported: ``dynamo`` (else TorchScript), ``mask`` (an
    attention_mask input), ``fixed_T`` (None: a dynamic token axis), ``external`` (the
    dynamo exporter's default external data)."""

    dynamo: bool
    mask: bool
    fixed_T: int | None = None
    external: bool = False
    opset: int = 18  # the dynamo exporter's (TorchScript: its default)

    @property
    def label(self) -> str:
        """e.g. "dynamo18-mask-T64-external"."""
        exporter = f"dynamo{self.opset}" if self.dynamo else "torchscript"
        parts = [exporter, "mask" if self.mask else "ids"]
        parts.append(f"T{self.fixed_T}" if self.fixed_T else "dynamicT")
        return "-".join(parts + (["external"] if self.external else []))


# The six exports of issue #23: both exporters, with and without attention_mask, fixed and
# dynamic T, the dynamo exporter's default external data.
SIX = (
    Export(dynamo=False, mask=False),
    Export(dynamo=False, mask=True),
    Export(dynamo=False, mask=True, fixed_T=64),
    Export(dynamo=True, mask=False, fixed_T=64),
    Export(dynamo=True, mask=True, external=True),
    Export(dynamo=False, mask=False, fixed_T=64),
)


def hf_gpt2(seed: int = 0, n_positions: int = 128, n_head: int = 4, n_embd: int = 32):
    """A random ``GPT2LMHeadModel``: 2 layers, ``n_head`` heads, V = 300, eval mode."""
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    cfg = GPT2Config(
        vocab_size=V,
        n_positions=n_positions,
        n_embd=n_embd,
        n_layer=2,
        n_head=n_head,
        bos_token_id=V - 1,
        eos_token_id=V - 1,
    )
    return GPT2LMHeadModel(cfg).eval()


class LogitsOnly(torch.nn.Module):
    """``model(input_ids[, attention_mask]).logits``: what people wrap a Hugging Face
    model in to export its logits (its cache, created inside, is not an output)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask=None):
        return self.model(input_ids=input_ids, attention_mask=attention_mask).logits


def export(model, how: Export, folder: Path) -> Path:
    """``torch.onnx.export`` of ``model`` as ``how`` says, into ``folder/<label>/model.onnx``.

    Raises:
        AssertionError: when the exported token axis is not what was asked for.
    """
    T = how.fixed_T or 8
    args = (torch.zeros(1, T, dtype=torch.long),)
    names = ["input_ids"]
    if how.mask:
        args, names = (*args, torch.ones(1, T, dtype=torch.long)), [*names, "attention_mask"]
    kwargs: dict = {"input_names": names, "output_names": ["logits"]}
    if how.dynamo:
        kwargs["opset_version"] = how.opset
        if how.fixed_T is None:
            longest = (
                getattr(model.config, "n_positions", None) or model.config.max_position_embeddings
            )
            dim = torch.export.Dim("T", min=2, max=longest)
            kwargs["dynamic_shapes"] = {n: {1: dim} for n in names}
    elif how.fixed_T is None:
        kwargs["dynamic_axes"] = {n: {1: "T"} for n in names}
    path = folder / how.label / "model.onnx"
    path.parent.mkdir(parents=True)
    wrapped = LogitsOnly(model).eval()
    external = {} if how.external else {"external_data": False}
    torch.onnx.export(wrapped, args, path, dynamo=how.dynamo, **external, **kwargs)
    dim = onnx.load(path, load_external_data=False).graph.input[0].type.tensor_type.shape.dim[1]
    assert dim.HasField("dim_value") == (how.fixed_T is not None), dim
    assert (path.parent / "model.onnx.data").exists() == how.external
    return path


def operators(path: Path) -> collections.Counter:
    """Operator type -> count in the graph at ``path`` (its external data not read)."""
    graph = onnx.load(path, load_external_data=False).graph
    return collections.Counter(node.op_type for node in graph.node)


def tokenizer_json() -> bytes:
    """The 300-id GPT-2-style tokenizer.json the models' vocabulary stands for."""
    return gpt2_style_tokenizer(V).encode()


def reference(model, ids: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """(logits (1, T, V), attention (L, H, T, T)) of ``model`` by transformers itself:
    ``output_attentions`` of its eager attention."""
    implementation = model.config._attn_implementation
    model.set_attn_implementation("eager")
    try:
        with torch.no_grad():
            out = model(torch.tensor([ids]), output_attentions=True, use_cache=False)
    finally:
        model.set_attn_implementation(implementation)
    return out.logits.numpy(), torch.cat(out.attentions).numpy()


class WithPast(torch.nn.Module):
    """GPT-2 as exported for generation (optimum's names): ``input_ids``,
    ``attention_mask`` (past + T), ``position_ids`` and ``past_key_values.<i>.key/value``
    (1, H, past, d_head) in; ``logits`` and ``present.<i>.key/value`` out."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, position_ids, *past):
        from transformers import DynamicCache

        cache = DynamicCache(config=self.model.config)
        for i in range(len(past) // 2):
            cache.update(past[2 * i], past[2 * i + 1], i)
        out = self.model(
            input_ids=input_ids,
            attention_mask=attention_mask,
            position_ids=position_ids,
            past_key_values=cache,
            use_cache=True,
        )
        layers = out.past_key_values.layers
        return (out.logits, *[t for layer in layers for t in (layer.keys, layer.values)])


def export_with_past(model, path: Path) -> Path:
    """:class:`WithPast` by the TorchScript exporter (dynamic T and past length) at ``path``."""
    cfg = model.config
    L, H, D, P, T = cfg.n_layer, cfg.n_head, cfg.n_embd // cfg.n_head, 2, 5
    past_names = [f"past_key_values.{i}.{kv}" for i in range(L) for kv in ("key", "value")]
    args = (
        torch.zeros(1, T, dtype=torch.long),
        torch.ones(1, P + T, dtype=torch.long),
        torch.arange(P, P + T)[None],
        *[torch.zeros(1, H, P, D) for _ in past_names],
    )
    dynamic = {"input_ids": {1: "T"}, "attention_mask": {1: "PT"}, "position_ids": {1: "T"}}
    torch.onnx.export(
        WithPast(model).eval(),
        args,
        path,
        dynamo=False,
        external_data=False,
        input_names=[*dynamic, *past_names],
        output_names=["logits", *[n.replace("past_key_values", "present") for n in past_names]],
        dynamic_axes={**dynamic, **{n: {2: "P"} for n in past_names}},
    )
    return path


def small_causal_lm(family: str, seed: int = 0):
    """A random 2-layer ``GPTNeoForCausalLM`` (a global and a local attention layer) or
    ``LlamaForCausalLM`` (rotary positions, 4 query heads sharing 2 key/value heads),
    V = 300, eval mode."""
    import transformers as tf

    torch.manual_seed(seed)
    if family == "gpt-neo":
        cfg = tf.GPTNeoConfig(
            vocab_size=V, max_position_embeddings=128, hidden_size=32, num_layers=2,
            num_heads=4, attention_types=[[["global", "local"], 1]], window_size=8,
            intermediate_size=64, bos_token_id=V - 1, eos_token_id=V - 1,
        )  # fmt: skip
        return tf.GPTNeoForCausalLM(cfg).eval()
    cfg = tf.LlamaConfig(
        vocab_size=V, max_position_embeddings=128, hidden_size=32, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, intermediate_size=64,
        bos_token_id=V - 1, eos_token_id=V - 1,
    )  # fmt: skip
    return tf.LlamaForCausalLM(cfg).eval()
