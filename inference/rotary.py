"""Rotary positions (RoPE, Su et al. 2021) in numpy, for the positional view of a rotary
model: the frequencies, the model's own q and k turned back to "content" (position 0),
and the score of one query content and one key content as a function of their offset.

The same rotation as ``models/rotary.py`` (the "rotate half" layout of Llama and
GPT-NeoX): dimension pair i (i and i + d_rot/2) turns by position / scale · θ_i,
θ_i = base^(-2i / d_rot); dimensions past d_rot pass unchanged. Because R(m)ᵀR(n) =
R(n - m), (R(m) q)·(R(n) k) depends on the offset m - n only: :func:`offset_scores`
measures that on the model's own vectors.
"""

from __future__ import annotations

import numpy as np


def inverse_frequencies(d_rot: int, base: float) -> np.ndarray:
    """θ_i = base^(-2i / d_rot), i = 0 .. d_rot/2 - 1: (d_rot/2,) radians per position."""
    i = np.arange(0, d_rot, 2, dtype=np.float64)  # (d_rot/2,)
    return base ** (-i / d_rot)  # (d_rot/2,)


def wavelengths(d_rot: int, base: float, scale: float = 1.0) -> np.ndarray:
    """Tokens per full turn of each pair, 2π scale / θ_i: (d_rot/2,)."""
    return 2 * np.pi * scale / inverse_frequencies(d_rot, base)  # (d_rot/2,)


def rotate(x: np.ndarray, positions: np.ndarray, d_rot: int, base: float,
           scale: float = 1.0) -> np.ndarray:  # fmt: skip
    """x (..., T, D) turned by ``positions`` (T,) (negative positions turn back):
    the first d_rot dimensions in rotate-half pairs, the rest unchanged; (..., T, D)."""
    angles = np.asarray(positions, np.float64)[:, None] / scale * inverse_frequencies(d_rot, base)
    cos, sin = np.cos(angles), np.sin(angles)  # (T, d_rot/2) each
    half = d_rot // 2
    x1, x2 = x[..., :half], x[..., half:d_rot]  # (..., T, d_rot/2) each
    turned = np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)  # (..., T, d_rot)
    return np.concatenate([turned, x[..., d_rot:]], axis=-1).astype(x.dtype)  # (..., T, D)


def contents(x: np.ndarray, d_rot: int, base: float, scale: float = 1.0) -> np.ndarray:
    """The model's rotated q or k (..., T, D) turned back to position 0: what the
    projection wrote before RoPE, (..., T, D)."""
    T = x.shape[-2]
    return rotate(x, -np.arange(T), d_rot, base, scale)  # (..., T, D)


def offset_scores(q: np.ndarray, k: np.ndarray, offsets: np.ndarray, start: int,
                  d_rot: int, base: float, scale: float = 1.0) -> np.ndarray:  # fmt: skip
    """The scaled score of query content q (D,) placed at ``start + offset`` and key
    content k (D,) placed at ``start``, for each offset (n,): (q̃·k̃)/√D, (n,)."""
    offsets = np.asarray(offsets)
    qs = rotate(np.repeat(q[None], len(offsets), 0), start + offsets, d_rot, base, scale)
    ks = rotate(np.repeat(k[None], len(offsets), 0), np.full(len(offsets), start), d_rot,
                base, scale)  # fmt: skip
    return (qs * ks).sum(-1) / np.sqrt(q.shape[-1])  # (n,)
