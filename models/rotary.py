"""Rotary position embedding (RoPE; Su et al. 2021, *RoFormer*), as Llama and GPT-NeoX use it.

Nothing is added to the token embedding. Each head's query and key are rotated by their
position before the dot product: dimension pair i (dimensions i and i + d_rot/2, the
"rotate half" layout of Hugging Face's Llama and GPT-NeoX) turns by the angle
position · θ_i, θ_i = base^(-2i / d_rot). A rotation by m then by -n leaves the
angle m - n, so q_m · k_n depends on the two contents and the offset m - n only.

Only the first ``d_rot`` dimensions turn (GPT-NeoX's ``rotary_pct``); the rest pass.
Linear position interpolation (Chen et al. 2023) divides the positions by ``scale``.
"""

from __future__ import annotations

import torch


def inverse_frequencies(d_rot: int, base: float) -> torch.Tensor:
    """θ_i = base^(-2i / d_rot), i = 0 .. d_rot/2 - 1: (d_rot/2,) radians per position."""
    i = torch.arange(0, d_rot, 2, dtype=torch.int64).to(torch.float32)  # (d_rot/2,)
    return 1.0 / (base ** (i / d_rot))  # (d_rot/2,)


def rotation(positions: torch.Tensor, d_rot: int, base: float, scale: float = 1.0):
    """cos and sin of every pair's angle at each position: positions (T,) int64 ->
    ``(cos, sin)`` (T, d_rot), each angle written twice (pair i at i and i + d_rot/2)."""
    t = positions.to(torch.float32) / scale  # (T,)
    angles = t.unsqueeze(-1) * inverse_frequencies(d_rot, base)  # (T, d_rot/2)
    angles = torch.cat([angles, angles], dim=-1)  # (T, d_rot)
    return angles.cos(), angles.sin()  # (T, d_rot) each


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """(x₁, x₂) -> (-x₂, x₁) over the last axis split in halves: (..., d) -> (..., d)."""
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)  # (..., d)


def apply_rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate the first d_rot dimensions of x (B, H, T, d_head) by cos, sin (T, d_rot);
    the other d_head - d_rot dimensions pass unchanged. Returns (B, H, T, d_head)."""
    d_rot = cos.shape[-1]
    turned, kept = x[..., :d_rot], x[..., d_rot:]  # (B, H, T, d_rot), (B, H, T, rest)
    turned = turned * cos + rotate_half(turned) * sin  # (B, H, T, d_rot)
    return torch.cat([turned, kept], dim=-1)  # (B, H, T, d_head)
