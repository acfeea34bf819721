"""The multi-head reshape and the causal mask: d2l's ``transpose_qkv`` and
``transpose_output`` (Dive into Deep Learning, section 11.5), and the (T, T) mask a
decoder's attention applies, with Mistral's sliding window."""

from __future__ import annotations

import torch


def split_heads(x: torch.Tensor, n_head: int) -> torch.Tensor:
    """d2l's ``transpose_qkv``: (B, T, C) -> (B, T, H, d_head) -> (B, H, T, d_head)."""
    B, T, C = x.shape
    x = x.view(B, T, n_head, C // n_head)  # (B, T, H, d_head)
    return x.transpose(1, 2)  # (B, H, T, d_head)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """d2l's ``transpose_output``: (B, H, T, d_head) -> (B, T, H, d_head) -> (B, T, C)."""
    B, H, T, D = x.shape
    x = x.transpose(1, 2).contiguous()  # (B, T, H, d_head)
    return x.view(B, T, H * D)  # (B, T, C)


def causal_mask(T: int, device: torch.device | None = None, window: int | None = None):
    """Boolean (T, T) mask, True where query i may attend to key j (j <= i); with a
    sliding ``window`` (Mistral) only the last ``window`` keys: i - window < j <= i."""
    mask = torch.ones(T, T, dtype=torch.bool, device=device).tril()  # (T, T)
    if window is not None:
        mask = mask & ~torch.ones(T, T, dtype=torch.bool, device=device).tril(-window)
    return mask  # (T, T)
