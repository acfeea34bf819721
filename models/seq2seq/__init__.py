"""Encoder-decoder models of the translation lessons (issue #10): an RNN encoder-decoder
with a fixed context vector, the same with Bahdanau's additive attention, and a
transformer encoder-decoder with cross-attention. ``build_seq2seq`` picks one by its key."""

from __future__ import annotations

from models.seq2seq.config import Seq2SeqConfig


def build_seq2seq(cfg: Seq2SeqConfig):
    """The model of ``cfg.kind``: ``RNNSeq2Seq`` (gru, bahdanau) or ``TransformerSeq2Seq``."""
    from models.seq2seq.rnn import RNNSeq2Seq
    from models.seq2seq.transformer import TransformerSeq2Seq

    return TransformerSeq2Seq(cfg) if cfg.kind == "transformer" else RNNSeq2Seq(cfg)
