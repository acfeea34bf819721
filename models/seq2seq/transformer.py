"""A transformer encoder-decoder (Vaswani et al. 2017, section 3): encoder
self-attention, decoder masked self-attention, and cross-attention whose queries come
from the decoder and keys and values from the encoder's output (the "memory").

Pre-LN blocks, sinusoidal positions (defined for any length), untied source and target
embeddings. As in The Annotated Transformer, every attention returns its weights beside
its output, and ``forward(..., inspect=True)`` names them: ``enc_self_attn``
(L, H, S, S), ``dec_self_attn`` (L, H, T, T), ``cross_attn`` (L, H, T, S), with the
queries, keys and values of each (``enc_q``, ``dec_q``, ``cross_q`` (L, H, T, d_head),
``cross_k`` (L, H, S, d_head), ...), for batch row 0.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from models.heads import causal_mask, merge_heads, split_heads
from models.seq2seq.config import Seq2SeqConfig
from models.transformer import sinusoidal_encoding


def attend(q, k, v, mask):
    """Scaled dot-product attention: q (B, H, T, d_head), k, v (B, H, S, d_head), mask
    broadcastable to (B, H, T, S), True where a query may look -> ``(output (B, H, T,
    d_head), weights (B, H, T, S))``; rows sum to 1 over the allowed keys."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, H, T, S)
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)  # (B,H,T,S)
    return weights @ v, weights  # (B, H, T, d_head)


class Attention(nn.Module):
    """Multi-head attention with separate query and key/value inputs (self or cross)."""

    def __init__(self, cfg: Seq2SeqConfig):
        super().__init__()
        C, self.H = cfg.d_model, cfg.n_head
        self.q_proj, self.k_proj = nn.Linear(C, C), nn.Linear(C, C)
        self.v_proj, self.o_proj = nn.Linear(C, C), nn.Linear(C, C)

    def keys_values(self, memory: torch.Tensor):
        """(B, S, C) -> keys and values (B, H, S, d_head): what a decoder caches."""
        return split_heads(self.k_proj(memory), self.H), split_heads(self.v_proj(memory), self.H)

    def forward(self, x, k, v, mask):
        """x (B, T, C) queries' input, k, v (B, H, S, d_head), mask (…, T, S) ->
        ``(out (B, T, C), {"q", "attn"})``."""
        q = split_heads(self.q_proj(x), self.H)  # (B, H, T, d_head)
        y, weights = attend(q, k, v, mask)  # (B, H, T, d_head), (B, H, T, S)
        return self.o_proj(merge_heads(y)), {"q": q, "attn": weights}  # (B, T, C)


class MLP(nn.Sequential):
    """(B, T, C) -> (B, T, d_mlp) -> GELU -> (B, T, C)."""

    def __init__(self, cfg: Seq2SeqConfig):
        super().__init__(
            nn.Linear(cfg.d_model, cfg.d_mlp), nn.GELU(), nn.Linear(cfg.d_mlp, cfg.d_model)
        )


class EncoderLayer(nn.Module):
    """x + self_attn(LN(x)) (padding masked), then x + MLP(LN(x))."""

    def __init__(self, cfg: Seq2SeqConfig):
        super().__init__()
        self.ln_1, self.attn = nn.LayerNorm(cfg.d_model), Attention(cfg)
        self.ln_2, self.mlp = nn.LayerNorm(cfg.d_model), MLP(cfg)

    def forward(self, x, key_mask):
        """x (B, S, C), key_mask (B, 1, 1, S) -> (B, S, C) and the layer's named tensors."""
        h = self.ln_1(x)  # (B, S, C)
        k, v = self.attn.keys_values(h)  # (B, H, S, d_head)
        a, cache = self.attn(h, k, v, key_mask)  # (B, S, C)
        x = x + a
        return x + self.mlp(self.ln_2(x)), {**cache, "k": k, "v": v}


class DecoderLayer(nn.Module):
    """x + masked_self_attn(LN(x)), x + cross_attn(LN(x), memory), x + MLP(LN(x))."""

    def __init__(self, cfg: Seq2SeqConfig):
        super().__init__()
        self.ln_1, self.self_attn = nn.LayerNorm(cfg.d_model), Attention(cfg)
        self.ln_2, self.cross_attn = nn.LayerNorm(cfg.d_model), Attention(cfg)
        self.ln_3, self.mlp = nn.LayerNorm(cfg.d_model), MLP(cfg)

    def forward(self, x, cross_k, cross_v, key_mask):
        """x (B, T, C); cross_k, cross_v (B, H, S, d_head) from the memory; key_mask
        (B, 1, 1, S) -> (B, T, C) and ``{"self": ..., "cross": ...}`` named tensors."""
        T = x.shape[1]
        h = self.ln_1(x)  # (B, T, C)
        k, v = self.self_attn.keys_values(h)  # (B, H, T, d_head)
        a, self_cache = self.self_attn(h, k, v, causal_mask(T, x.device))  # (B, T, C)
        x = x + a
        c, cross_cache = self.cross_attn(self.ln_2(x), cross_k, cross_v, key_mask)  # (B, T, C)
        x = x + c
        self_cache.update(k=k, v=v)
        return x + self.mlp(self.ln_3(x)), {"self": self_cache, "cross": cross_cache}


class TransformerSeq2Seq(nn.Module):
    """Encoder-decoder transformer: ``forward(src, tgt_in)`` -> logits (B, T, V)."""

    def __init__(self, cfg: Seq2SeqConfig):
        super().__init__()
        if cfg.kind != "transformer":
            raise ValueError(f"TransformerSeq2Seq builds transformer, not {cfg.kind!r}")
        self.cfg = cfg
        self.src_embed = nn.Embedding(cfg.src_vocab, cfg.d_model)
        self.tgt_embed = nn.Embedding(cfg.tgt_vocab, cfg.d_model)
        self.encoder = nn.ModuleList(EncoderLayer(cfg) for _ in range(cfg.n_layer))
        self.decoder = nn.ModuleList(DecoderLayer(cfg) for _ in range(cfg.n_layer))
        self.ln_enc, self.ln_dec = nn.LayerNorm(cfg.d_model), nn.LayerNorm(cfg.d_model)
        self.out = nn.Linear(cfg.d_model, cfg.tgt_vocab)

    def _embed(self, embed: nn.Embedding, ids: torch.Tensor) -> torch.Tensor:
        """Token embedding * sqrt(C) + sinusoidal positions: (B, T) -> (B, T, C)."""
        pe = sinusoidal_encoding(torch.arange(ids.shape[1], device=ids.device), self.cfg.d_model)
        return embed(ids) * math.sqrt(self.cfg.d_model) + pe  # (B, T, C)

    def encode(self, src, key_mask):
        """src (B, S), key_mask (B, 1, 1, S) -> memory (B, S, C) and per-layer caches."""
        x, caches = self._embed(self.src_embed, src), []  # (B, S, C)
        for layer in self.encoder:
            x, cache = layer(x, key_mask)  # (B, S, C)
            caches.append(cache)
        return self.ln_enc(x), caches  # (B, S, C)

    def cross_keys_values(self, memory):
        """The decoder layers' cross-attention keys and values of the memory, stacked:
        (L, B, H, S, d_head) each: computed once per sentence, reused at every step."""
        pairs = [layer.cross_attn.keys_values(memory) for layer in self.decoder]
        return torch.stack([k for k, _ in pairs]), torch.stack([v for _, v in pairs])

    def decode(self, tgt_in, cross_k, cross_v, key_mask):
        """tgt_in (B, T), cross_k/v (L, B, H, S, d_head) -> logits (B, T, V), caches."""
        x, caches = self._embed(self.tgt_embed, tgt_in), []  # (B, T, C)
        for i, layer in enumerate(self.decoder):
            x, cache = layer(x, cross_k[i], cross_v[i], key_mask)  # (B, T, C)
            caches.append(cache)
        return self.out(self.ln_dec(x)), caches  # (B, T, V)

    def forward(self, src, tgt_in, src_len=None, inspect: bool = False):
        """Teacher forcing: src (B, S), tgt_in (B, T) -> logits (B, T, V); with
        ``inspect=True`` also the named tensors of batch row 0 (module docstring)."""
        S = src.shape[1]
        lengths = src_len if src_len is not None else torch.full((src.shape[0],), S)
        key_mask = (torch.arange(S) < lengths.unsqueeze(1))[:, None, None, :]  # (B,1,1,S)
        memory, enc = self.encode(src, key_mask)  # (B, S, C)
        cross_k, cross_v = self.cross_keys_values(memory)  # (L, B, H, S, d_head)
        logits, dec = self.decode(tgt_in, cross_k, cross_v, key_mask)  # (B, T, V)
        if not inspect:
            return logits
        stack = lambda caches, key: torch.stack([c[key][0] for c in caches])  # noqa: E731
        return logits, {
            "enc_self_attn": stack(enc, "attn"),  # (L, H, S, S)
            "enc_q": stack(enc, "q"), "enc_k": stack(enc, "k"), "enc_v": stack(enc, "v"),
            "dec_self_attn": stack([c["self"] for c in dec], "attn"),  # (L, H, T, T)
            "dec_q": stack([c["self"] for c in dec], "q"),  # (L, H, T, d_head)
            "dec_k": stack([c["self"] for c in dec], "k"),
            "dec_v": stack([c["self"] for c in dec], "v"),
            "cross_attn": stack([c["cross"] for c in dec], "attn"),  # (L, H, T, S)
            "cross_q": stack([c["cross"] for c in dec], "q"),  # (L, H, T, d_head)
            "cross_k": cross_k[:, 0], "cross_v": cross_v[:, 0],  # (L, H, S, d_head)
        }  # fmt: skip
