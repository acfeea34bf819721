"""A model's mean next-token loss on a token stream, window by window: the validation
loss ``training/train.py`` reports, the model card's perplexity (``training/evaluate.py``)
and the training history's (``training/history.py``)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from models.transformer import Transformer


def scored_windows(n_tokens: int, T: int, max_windows: int | None = None) -> tuple[int, int]:
    """(windows, window length) that :func:`evaluate_loss` scores in a stream of
    ``n_tokens``: whole consecutive windows of T tokens (cut to n_tokens - 1), each scored
    on all T of its next tokens, so n x T tokens in all; the tail after the last whole
    window is left out (the model card's ``val_tokens`` says how many)."""
    T = min(T, n_tokens - 1)
    n = (n_tokens - 1) // T
    return (n if max_windows is None else min(max_windows, n)), T


@torch.no_grad()
def evaluate_loss(
    model: Transformer, stream: torch.Tensor, T: int, max_windows: int | None = 64, batch: int = 64
) -> float:
    """Mean next-token cross-entropy (nats/token) over consecutive windows of ``stream``.

    Args:
        T: window length (cut to the stream).
        max_windows: the first this many windows (a quick look during training), or
            None for every whole window of the stream (the model card: the whole
            validation set).
        batch: windows per forward pass.
    """
    model.eval()
    n, T = scored_windows(len(stream), T, max_windows)
    x = stream[: n * T].view(n, T)  # (n, T)
    y = stream[1 : n * T + 1].view(n, T)  # (n, T)
    total = 0.0
    for start in range(0, n, batch):
        logits = model(x[start : start + batch])  # (b, T, V)
        target = y[start : start + batch].flatten()
        total += F.cross_entropy(logits.flatten(0, 1), target, reduction="sum").item()
    return total / (n * T)
