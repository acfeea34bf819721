"""RNN encoder-decoders: a fixed context vector, or Bahdanau's additive attention.

After d2l.ai chapters 10.7 ("Sequence-to-Sequence Learning") and 11.4 ("The Bahdanau
Attention Mechanism"):

* ``gru``: the encoder's last hidden state is the context c; every decoder step reads
  [embed(y_{t-1}); c] (Cho et al. 2014; Sutskever et al. 2014 use c only as the
  decoder's initial state). One vector carries the
  whole sentence: the bottleneck attention removed.
* ``bahdanau``: at step t the query is the decoder's previous hidden state s_{t-1}, the
  keys and values are the encoder outputs h_j; a(s, h) = w_v^T tanh(W_q s + W_k h),
  alpha_t = softmax over source positions, c_t = sum_j alpha_tj h_j, and the step reads
  [c_t; embed(y_{t-1})] (Bahdanau et al. 2015).

``step`` is one decoder step on plain tensors (the ONNX step graph exports it);
``forward`` runs it over a target with teacher forcing.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from models.seq2seq.config import Seq2SeqConfig


class Encoder(nn.Module):
    """Embedding + GRU: source ids (B, S) -> outputs (B, S, d) and final state (N, B, d)."""

    def __init__(self, cfg: Seq2SeqConfig):
        super().__init__()
        self.embed = nn.Embedding(cfg.src_vocab, cfg.d_model)
        self.rnn = nn.GRU(cfg.d_model, cfg.d_model, cfg.n_layer, batch_first=True)

    def forward(self, src: torch.Tensor, src_len: torch.Tensor | None = None):
        """src (B, S) int64, src_len (B,) true lengths (None: no padding) ->
        ``(outputs (B, S, d), state (N, B, d))``; padded positions of outputs are 0."""
        x = self.embed(src)  # (B, S, d)
        if src_len is None:
            return self.rnn(x)  # (B, S, d), (N, B, d)
        packed = pack_padded_sequence(x, src_len.cpu(), batch_first=True, enforce_sorted=False)
        out, state = self.rnn(packed)  # state at each sentence's last true token
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=src.shape[1])
        return out, state  # (B, S, d), (N, B, d)


class AdditiveAttention(nn.Module):
    """a(q, k) = w_v^T tanh(W_q q + W_k k) (Bahdanau et al. 2015; d2l 11.3.2)."""

    def __init__(self, d: int):
        super().__init__()
        self.W_q = nn.Linear(d, d, bias=False)
        self.W_k = nn.Linear(d, d, bias=False)
        self.w_v = nn.Linear(d, 1, bias=False)

    def forward(self, query: torch.Tensor, keys: torch.Tensor, key_mask: torch.Tensor):
        """query (B, d), keys = values (B, S, d), key_mask (B, S) True where a key exists ->
        ``(context (B, d), weights (B, S))``; the weights sum to 1 over the real keys."""
        features = torch.tanh(self.W_q(query).unsqueeze(1) + self.W_k(keys))  # (B, S, d)
        scores = self.w_v(features).squeeze(-1)  # (B, S)
        scores = scores.masked_fill(~key_mask, float("-inf"))  # (B, S)
        weights = torch.softmax(scores, dim=-1)  # (B, S)
        return (weights.unsqueeze(1) @ keys).squeeze(1), weights  # (B, d), (B, S)


class Decoder(nn.Module):
    """One GRU decoder for both RNN kinds; ``attention`` decides where its context comes
    from: the encoder's last state (fixed) or additive attention over the encoder outputs."""

    def __init__(self, cfg: Seq2SeqConfig):
        super().__init__()
        d = cfg.d_model
        self.embed = nn.Embedding(cfg.tgt_vocab, d)
        self.attention = AdditiveAttention(d) if cfg.kind == "bahdanau" else None
        self.rnn = nn.GRU(2 * d, d, cfg.n_layer, batch_first=True)
        self.out = nn.Linear(d, cfg.tgt_vocab)

    def step(self, token, hidden, enc_out, key_mask, context0):
        """One decoder step.

        Args:
            token: (B,) int64 the previous target token y_{t-1} (``<bos>`` first).
            hidden: (N, B, d) the decoder state s_{t-1} (the encoder's final state first).
            enc_out: (B, S, d) the encoder outputs h_j (keys and values).
            key_mask: (B, S) True at real source positions.
            context0: (B, d) the encoder's last state (the fixed context of ``gru``).

        Returns:
            ``(logits (B, V), hidden (N, B, d), weights (B, S), context (B, d))``; the
            weights of ``gru`` are all zero (it does not attend).
        """
        if self.attention is None:
            context = context0  # (B, d)
            weights = torch.zeros_like(key_mask, dtype=enc_out.dtype)  # (B, S)
        else:
            context, weights = self.attention(hidden[-1], enc_out, key_mask)  # (B,d),(B,S)
        x = torch.cat([context, self.embed(token)], dim=-1).unsqueeze(1)  # (B, 1, 2d)
        y, hidden = self.rnn(x, hidden)  # (B, 1, d), (N, B, d)
        return self.out(y[:, 0]), hidden, weights, context  # (B, V)


class RNNSeq2Seq(nn.Module):
    """Encoder + decoder (``gru`` or ``bahdanau``)."""

    def __init__(self, cfg: Seq2SeqConfig):
        super().__init__()
        if cfg.kind not in ("gru", "bahdanau"):
            raise ValueError(f"RNNSeq2Seq builds gru or bahdanau, not {cfg.kind!r}")
        self.cfg = cfg
        self.encoder = Encoder(cfg)
        self.decoder = Decoder(cfg)

    def forward(self, src, tgt_in, src_len=None, inspect: bool = False):
        """Teacher forcing: src (B, S), tgt_in (B, T) (``<bos>`` + the gold prefix) ->
        logits (B, T, V); with ``inspect=True`` also ``{"cross_attn": (B, T, S),
        "context": (B, T, d)}``: each step's attention over the source and context."""
        enc_out, hidden = self.encoder(src, src_len)  # (B, S, d), (N, B, d)
        S = src.shape[1]
        lengths = src_len if src_len is not None else torch.full((src.shape[0],), S)
        key_mask = torch.arange(S).unsqueeze(0) < lengths.unsqueeze(1)  # (B, S)
        context0 = hidden[-1]  # (B, d)
        logits, weights, contexts = [], [], []
        for t in range(tgt_in.shape[1]):
            lg, hidden, w, c = self.decoder.step(tgt_in[:, t], hidden, enc_out, key_mask, context0)
            logits.append(lg)
            weights.append(w)
            contexts.append(c)
        logits = torch.stack(logits, 1)  # (B, T, V)
        if not inspect:
            return logits
        return logits, {"cross_attn": torch.stack(weights, 1), "context": torch.stack(contexts, 1)}
