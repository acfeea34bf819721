"""Plain torch language models that are *not* this project's, exported as a user would.

A GPT-style decoder (token and learned position embeddings, pre-LayerNorm blocks, GELU
MLP, untied head) whose attention is either ``F.softmax`` over masked scores
(``attention="softmax"``, nanoGPT's slow path) or ``F.scaled_dot_product_attention(...,
is_causal=True)`` (``"sdpa"``, nanoGPT's fast path), or ``F.softmax`` over unmasked scores
(``"bidirectional"``: every query sees every key, as an encoder), or which has no attention at all
(``"none"``: a softmax gate over the channels, (B, T, C), stands in for it, so the graph
has Softmax nodes of another shape). :func:`export` writes it with
``torch.onnx.export`` (the dynamo exporter, torch's default, or ``dynamo=False``), no
extra outputs: one input, one output, nothing named as our contract names things.

:func:`reference` runs the torch model and computes the attention probabilities
explicitly, softmax(QKᵀ/√d_head + causal mask), whichever attention path it uses.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import onnx
import torch
import torch.nn.functional as F
from torch import nn

from models.tokenizer import char_tokenizer
from tests.helpers.nanogpt_layout import STOI


def char_tokenizer_json(stoi: dict[str, int] = STOI) -> bytes:
    """A character vocabulary as a ``tokenizer.json`` (nanoGPT's Shakespeare characters)."""
    return char_tokenizer(stoi).to_str().encode()


class Attention(nn.Module):
    def __init__(self, C: int, H: int, T: int, kind: str):
        super().__init__()
        self.H, self.kind = H, kind
        self.qkv, self.proj = nn.Linear(C, 3 * C), nn.Linear(C, C)
        self.register_buffer("mask", torch.tril(torch.ones(T, T)).view(1, 1, T, T))
        self.record = False  # keep the probabilities of a forward (reference runs only)
        self.probs: torch.Tensor | None = None  # (B, H, T, T) of the last recorded forward

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)  # (B, T, C) each
        if self.kind == "none":
            return self.proj(v * F.softmax(q, dim=-1))  # a gate over channels, no attention
        q, k, v = (t.view(B, T, self.H, C // self.H).transpose(1, 2) for t in (q, k, v))
        if self.kind == "sdpa":
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, H, T, D)
        else:
            y = F.softmax(self.masked_scores(q, k), dim=-1) @ v  # (B, H, T, D)
        if self.record:  # the reference, computed apart
            self.probs = F.softmax(self.masked_scores(q, k), dim=-1).detach()  # (B, H, T, T)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))

    def masked_scores(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        """QKᵀ/√d_head with −inf where key j > query i: (B, H, T, T)."""
        T = q.shape[2]
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, H, T, T)
        if self.kind == "bidirectional":  # every key, as an encoder: no causal mask
            return scores
        return scores.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))


class Block(nn.Module):
    def __init__(self, C: int, H: int, T: int, kind: str):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(C), nn.LayerNorm(C)
        self.attn = Attention(C, H, T, kind)
        self.mlp = nn.Sequential(nn.Linear(C, 4 * C), nn.GELU(), nn.Linear(4 * C, C))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class TinyLM(nn.Module):
    """A GPT-style language model: ids (B, T) -> logits (B, T, V)."""

    def __init__(self, V: int, L: int = 2, H: int = 4, C: int = 32, T: int = 16, kind="softmax"):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(V, C), nn.Embedding(T, C)
        self.blocks = nn.ModuleList(Block(C, H, T, kind) for _ in range(L))
        self.ln_f, self.head = nn.LayerNorm(C), nn.Linear(C, V, bias=False)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        T = idx.shape[1]
        x = self.wte(idx) + self.wpe(torch.arange(T, device=idx.device))  # (B, T, C)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))  # (B, T, V)


def tiny_lm(V: int, kind: str = "softmax", seed: int = 0, **sizes) -> TinyLM:
    """A randomly initialised :class:`TinyLM` in eval mode."""
    torch.manual_seed(seed)
    return TinyLM(V, kind=kind, **sizes).eval()


def export(
    model: TinyLM, dynamo: bool = True, fixed_T: int | None = None, opset: int | None = None
) -> bytes:
    """``torch.onnx.export`` of ``model`` as one self-contained graph (input ``idx``
    (1, T), output ``logits``); T is a dynamic axis unless ``fixed_T`` is given;
    ``opset`` is the exporter's default unless given (from 23 on, the dynamo exporter
    writes SDPA as ONNX's ``Attention`` operator).

    Raises:
        AssertionError: if the exported token axis is not what was asked for.
    """
    T = fixed_T or 8
    ids = torch.zeros(1, T, dtype=torch.long)
    kwargs: dict = {"input_names": ["idx"], "output_names": ["logits"], "opset_version": opset}
    if fixed_T is None and dynamo:
        context = model.wpe.num_embeddings
        kwargs["dynamic_shapes"] = {"idx": {1: torch.export.Dim("T", min=2, max=context)}}
    elif fixed_T is None:
        kwargs["dynamic_axes"] = {"idx": {1: "T"}, "logits": {1: "T"}}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "model.onnx"
        torch.onnx.export(model, (ids,), path, dynamo=dynamo, external_data=False, **kwargs)
        data = path.read_bytes()
    dim = onnx.load_from_string(data).graph.input[0].type.tensor_type.shape.dim[1]
    assert dim.HasField("dim_value") == (fixed_T is not None), dim
    return data


def reference(model: TinyLM, ids: list[int]) -> tuple:
    """(logits (1, T, V), attention probabilities (L, H, T, T)) of ``model`` in torch,
    the probabilities computed explicitly as softmax(QKᵀ/√d_head + causal mask)."""
    for block in model.blocks:
        block.attn.record = True
    try:
        with torch.no_grad():
            logits = model(torch.tensor([ids]))
    finally:
        for block in model.blocks:
            block.attn.record = False
    attn = torch.cat([b.attn.probs for b in model.blocks])  # (L, H, T, T), B = 1
    return logits.numpy(), attn.numpy()
