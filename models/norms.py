"""The residual stream's normalisations: LayerNorm and RMSNorm, picked by ``cfg.norm``.

* LayerNorm (Ba et al. 2016): (x - mean) / sqrt(var + eps) * γ + β; GPT-2, ours.
* RMSNorm (Zhang & Sennrich 2019): x / sqrt(mean(x²) + eps) * γ; no centring, no bias;
  Llama, Mistral, Qwen2 (Hugging Face's ``LlamaRMSNorm``, computed in float32).

Both expose ``weight``, ``bias`` (None for RMSNorm) and ``eps``, and :func:`norm_scale`
and :func:`centred` split either into "centre, divide by a per-token scale, then γ", the
form the direct logit attribution freezes (``models/lab.py``).
"""

from __future__ import annotations

import torch
from torch import nn

from models.config import ModelConfig


class RMSNorm(nn.Module):
    """x / sqrt(mean(x²) + eps) * weight over the last axis: (..., C) -> (..., C)."""

    def __init__(self, d_model: int, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))  # (C,)
        self.bias = None
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(..., C) -> (..., C)."""
        rms = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)  # (..., 1)
        return x * rms * self.weight  # (..., C)


def make_norm(cfg: ModelConfig) -> nn.Module:
    """The norm ``cfg.norm`` names, of width d_model, with ``cfg.ln_eps``."""
    if cfg.norm == "rmsnorm":
        return RMSNorm(cfg.d_model, eps=cfg.ln_eps)
    return nn.LayerNorm(cfg.d_model, eps=cfg.ln_eps, bias=cfg.ln_bias)


def centred(norm: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """What the norm divides: x - mean(x) for LayerNorm, x itself for RMSNorm; (..., C)."""
    if isinstance(norm, RMSNorm):
        return x
    return x - x.mean(dim=-1, keepdim=True)  # (..., C)


def norm_scale(norm: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """The per-token divisor: sqrt(var + eps) (LayerNorm) or sqrt(mean(x²) + eps)
    (RMSNorm) of x (..., C) -> (...,)."""
    if isinstance(norm, RMSNorm):
        return torch.sqrt(x.pow(2).mean(dim=-1) + norm.eps)  # (...,)
    return torch.sqrt(x.var(dim=-1, unbiased=False) + norm.eps)  # (...,)
