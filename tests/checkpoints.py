"""Tiny checkpoints in this project's .safetensors format, written by the tests that upload them."""

from __future__ import annotations

from pathlib import Path

SENTENCES = ["the cat sat on the mat .", "a bird is on the tree ."]


def tiny_checkpoint(path: Path, seed: int = 0, sentences=SENTENCES, **config) -> Path:
    """Write a random ``Transformer`` of ``ModelConfig(**config)`` with a tokenizer built
    from ``sentences`` to ``path``; ``vocab_size`` comes from that tokenizer."""
    import torch

    from models.checkpoint import save_checkpoint
    from models.config import ModelConfig
    from models.tokenizer import build_tokenizer
    from models.transformer import Transformer

    tok = build_tokenizer(list(sentences))
    torch.manual_seed(seed)
    cfg = ModelConfig(vocab_size=tok.get_vocab_size(), **config)
    save_checkpoint(path, Transformer(cfg), tok)
    return path
