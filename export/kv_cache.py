"""Softmax attention with a key/value cache: one-token decoding, exported to ONNX.

The shipped softmax model has no cached decoding graph (the contract only has
inspect and fast graphs), so the generation measurement builds one here from the
same ``Transformer``: each step feeds one token, its position and the keys and
values of all P earlier tokens, and gets back the logits plus the caches grown
to P + 1. Work per token is O(P d) instead of the O(P^2 d) of recomputing the
prefix; memory grows as 2 L H P d_head floats (the recurrent state of linear
attention stays at L H d_head (d_head + 1)).

It is a naive cache: K and V grow by Concat inside the graph, and on CPU the
whole cache goes out to numpy and back in every step (O(P) copies per token; no
preallocated buffer updated in place). On CUDA ``inference/decode.py`` keeps it
on the GPU with I/O binding; ``inference.decode.OnnxKVDecoder`` runs it.
"""

from __future__ import annotations

import math
from pathlib import Path

import torch
from torch import nn

from export.checks import check_graph
from export.torch_export import export_module
from models.heads import merge_heads
from models.transformer import Transformer

KV_INPUTS = ("token", "position", "past_k", "past_v")
KV_OUTPUTS = ("logits", "k_out", "v_out")


class KVCacheDecoder(nn.Module):
    """(token, position, past_k, past_v) -> (logits, k_out, v_out) for a softmax model.

    Inputs: token int64 (1, 1); position int64 (1,); past_k, past_v float32
    (L, H, P, d_head), P >= 0 earlier tokens. Outputs: logits (1, V); k_out,
    v_out (L, H, P + 1, d_head). Start from P = 0 (empty caches).
    """

    def __init__(self, model: Transformer):
        super().__init__()
        if model.cfg.attention != "softmax":
            raise ValueError("the key/value cache decoder is for softmax attention")
        self.model = model

    def forward(self, token, position, past_k, past_v):
        m = self.model
        x = m.embed(token) + m.positional_encoding(position)  # (1, 1, C), as in Transformer.step
        ks, vs = [], []
        for layer, block in enumerate(m.blocks):
            q, k, v = block.attn.qkv(block.ln_1(x), position)  # (1, H, 1, D) each
            K = torch.cat([past_k[layer : layer + 1], k], dim=2)  # (1, H, P+1, D)
            V = torch.cat([past_v[layer : layer + 1], v], dim=2)  # (1, H, P+1, D)
            scores = q @ K.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (1, H, 1, P+1)
            window = getattr(block.attn.mixing, "window", None)
            if window is not None:  # a sliding window sees the last `window` keys only
                j = torch.arange(K.shape[2])  # (P+1,)
                scores = scores.masked_fill(j <= K.shape[2] - 1 - window, float("-inf"))
            y = torch.softmax(scores, dim=-1) @ V  # (1, H, 1, D)
            mid = x + block.attn.o_proj(merge_heads(y))  # (1, 1, C)
            x = mid + block.mlp(block.ln_2(block.mlp_input(x, mid)))  # (1, 1, C)
            ks.append(K[0])
            vs.append(V[0])
        logits = m.lm_head(m.ln_f(x))[:, 0]  # (1, V)
        return logits, torch.stack(ks), torch.stack(vs)  # (1, V), (L, H, P+1, D) x2


def export_kv_cache(model: Transformer, out_dir: Path) -> Path:
    """Export :class:`KVCacheDecoder` to ``out_dir/softmax.kvcache.onnx``.

    Same recipe as ``export/graphs.py`` (dynamo, weights inside the file), with
    the cache length P a dynamic axis; raises ValueError if it was frozen.
    """
    cfg = model.eval().cfg
    L, H, D = cfg.n_layer, cfg.n_head, cfg.d_head
    P = torch.export.Dim("P", min=0, max=1 << 16)
    args = (
        torch.zeros(1, 1, dtype=torch.long),  # (1, 1)
        torch.tensor([3]),  # (1,)
        torch.randn(L, H, 3, D),  # (L, H, P, D); P = 3 so the exporter keeps it symbolic
        torch.randn(L, H, 3, D),
    )
    dynamic = {"token": None, "position": None, "past_k": {2: P}, "past_v": {2: P}}
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "softmax.kvcache.onnx"
    export_module(KVCacheDecoder(model), args, path, KV_INPUTS, KV_OUTPUTS, dynamic)
    check_graph(path, {"past_k": 2, "past_v": 2})
    return path
