"""Multi-head attention: one interface, two mixing rules picked by a string key.

Following fast-transformers, the query/key/value/output projections are shared
and only the mixing rule differs:

* ``softmax``: softmax(QK^T / sqrt(d_head) + causal mask) V (Vaswani et al. 2017).
* ``linear``: phi(x) = elu(x) + 1 and
  y_i = phi(q_i)^T S_i / (phi(q_i)^T z_i + eps), S_i = sum_{j<=i} phi(k_j) v_j^T,
  z_i = sum_{j<=i} phi(k_j)  (Katharopoulos et al. 2020, "Transformers are RNNs").

As in The Annotated Transformer, the parallel mixing functions return the weights
beside the output, ``(output, weights, scores)``; the weights are never hidden inside
a fused kernel. The recurrent form returns ``(output, state, normalizer)``.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from models.config import ModelConfig


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


def causal_mask(T: int, device: torch.device | None = None) -> torch.Tensor:
    """Boolean (T, T) mask, True where query i may attend to key j (j <= i)."""
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()  # (T, T)


def softmax_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Causal scaled dot-product attention.

    Args:
        q, k, v: (B, H, T, d_head).

    Returns:
        ``(output, weights, scores)``: output (B, H, T, d_head); weights
        (B, H, T, T), rows sum to 1, zero above the diagonal; scores
        (B, H, T, T), the scaled logits QK^T / sqrt(d_head) before the mask.
    """
    T, D = q.shape[-2], q.shape[-1]
    scores = q @ k.transpose(-2, -1) / math.sqrt(D)  # (B, H, T, T)
    masked = scores.masked_fill(~causal_mask(T, q.device), float("-inf"))  # (B, H, T, T)
    weights = torch.softmax(masked, dim=-1)  # (B, H, T, T)
    return weights @ v, weights, scores  # (B, H, T, d_head)


def feature_map(x: torch.Tensor) -> torch.Tensor:
    """phi(x) = elu(x) + 1, positive everywhere (Katharopoulos et al. 2020, eq. 7).

    Computed as x + 1 for x > 0 and exp(x) otherwise: the same function, without the
    cancellation of (exp(x) - 1) + 1 in float32, which loses most digits of small
    phi values and made PyTorch and onnxruntime disagree on trained models.
    """
    return torch.where(x > 0, x + 1.0, torch.exp(torch.clamp(x, max=0.0)))


def linear_attention_parallel(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, eps: float = 1e-6
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Causal linear attention in its parallel (T x T) form, for display.

    Args:
        q, k, v: (B, H, T, d_head); eps: normalizer epsilon.

    Returns:
        ``(output, weights, scores)``: output (B, H, T, d_head); weights
        (B, H, T, T) the implied matrix phi(q_i)^T phi(k_j) / (phi(q_i)^T z_i + eps),
        causal, so ``weights @ v == output``; scores (B, H, T, T) = phi(Q) phi(K)^T
        before the mask.
    """
    T = q.shape[-2]
    scores = feature_map(q) @ feature_map(k).transpose(-2, -1)  # (B, H, T, T)
    masked = scores * causal_mask(T, q.device)  # (B, H, T, T)
    weights = masked / (masked.sum(dim=-1, keepdim=True) + eps)  # (B, H, T, T)
    return weights @ v, weights, scores  # (B, H, T, d_head)


def linear_attention_states(k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """All prefix states of causal linear attention by cumulative sums, no T x T tensor.

    Args:
        k, v: (B, H, T, d_head).

    Returns:
        ``(state, normalizer)``: state (B, H, T, d_head, d_head) with
        S_i = sum_{j<=i} phi(k_j) v_j^T; normalizer (B, H, T, d_head) with
        z_i = sum_{j<=i} phi(k_j).
    """
    phi_k = feature_map(k)  # (B, H, T, d_head)
    outer = phi_k.unsqueeze(-1) * v.unsqueeze(-2)  # (B, H, T, d_head, d_head)
    return outer.cumsum(dim=2), phi_k.cumsum(dim=2)  # (B,H,T,D,D), (B,H,T,D)


def linear_attention_readout(
    q: torch.Tensor, state: torch.Tensor, normalizer: torch.Tensor, eps: float = 1e-6
) -> torch.Tensor:
    """y_i = phi(q_i)^T S_i / (phi(q_i)^T z_i + eps).

    Args:
        q: (..., d_head); state: (..., d_head, d_head); normalizer: (..., d_head).

    Returns:
        (..., d_head).
    """
    phi_q = feature_map(q)  # (..., d_head)
    numerator = (phi_q.unsqueeze(-2) @ state).squeeze(-2)  # (..., d_head)
    denominator = (phi_q * normalizer).sum(-1, keepdim=True) + eps  # (..., 1)
    return numerator / denominator  # (..., d_head)


def linear_attention_recurrent(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, eps: float = 1e-6
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Causal linear attention as an RNN, one token at a time (reference loop).

    Args:
        q, k, v: (B, H, T, d_head).

    Returns:
        ``(output, state, normalizer)``: (B, H, T, d_head), (B, H, T, d_head, d_head)
        and (B, H, T, d_head), the state S_i and normalizer z_i after each token.
    """
    B, H, T, D = q.shape
    S = q.new_zeros(B, H, D, D)  # (B, H, d_head, d_head)
    z = q.new_zeros(B, H, D)  # (B, H, d_head)
    outputs, states, normalizers = [], [], []
    for i in range(T):
        phi_k = feature_map(k[:, :, i])  # (B, H, d_head)
        S = S + phi_k.unsqueeze(-1) * v[:, :, i].unsqueeze(-2)  # (B, H, d_head, d_head)
        z = z + phi_k  # (B, H, d_head)
        outputs.append(linear_attention_readout(q[:, :, i], S, z, eps))  # (B, H, d_head)
        states.append(S)
        normalizers.append(z)
    return torch.stack(outputs, 2), torch.stack(states, 2), torch.stack(normalizers, 2)


class MultiHeadAttention(nn.Module):
    """Shared Q/K/V/O projections around a mixing rule chosen by ``cfg.attention``.

    ``forward(x)`` maps (B, T, C) -> (B, T, C). With ``inspect=True`` it also
    returns a dict of named intermediates (see ``models/contract.py``) for one
    layer, each with a leading batch axis: ``q, k, v, head_out`` (B, H, T, d_head),
    ``attn, scores`` (B, H, T, T) and, for linear attention, ``phi_q, phi_k``,
    ``state`` (B, H, T, d_head, d_head), ``normalizer`` (B, H, T, d_head).
    """

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        C = cfg.d_model
        self.q_proj = nn.Linear(C, C, bias=cfg.bias)
        self.k_proj = nn.Linear(C, C, bias=cfg.bias)
        self.v_proj = nn.Linear(C, C, bias=cfg.bias)
        self.o_proj = nn.Linear(C, C, bias=cfg.bias)

    def qkv(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Project and split heads: (B, T, C) -> three (B, H, T, d_head)."""
        H = self.cfg.n_head
        q = split_heads(self.q_proj(x), H)  # (B, H, T, d_head)
        k = split_heads(self.k_proj(x), H)  # (B, H, T, d_head)
        v = split_heads(self.v_proj(x), H)  # (B, H, T, d_head)
        return q, k, v

    def forward(self, x: torch.Tensor, inspect: bool = False):
        """(B, T, C) -> (B, T, C); with ``inspect=True`` also the dict of named intermediates.

        Softmax attention and linear attention while training or inspecting use the
        parallel (T x T) form; linear attention at inference uses the cumulative
        state form, which never builds a T x T tensor.
        """
        q, k, v = self.qkv(x)  # (B, H, T, d_head) each
        cache: dict[str, torch.Tensor] = {}
        if self.cfg.attention == "softmax":
            y, weights, scores = softmax_attention(q, k, v)  # (B, H, T, d_head)
        elif inspect or self.training:
            # The parallel form: same numbers, and cheaper to train for T <= ~d_head^2.
            y, weights, scores = linear_attention_parallel(q, k, v, self.cfg.eps)
            if inspect:
                state, normalizer = linear_attention_states(k, v)  # (B,H,T,D,D), (B,H,T,D)
                cache.update(phi_q=feature_map(q), phi_k=feature_map(k))  # (B,H,T,D)
                cache.update(state=state, normalizer=normalizer)
        else:  # fast inference path: no T x T tensor
            state, normalizer = linear_attention_states(k, v)  # (B,H,T,D,D), (B,H,T,D)
            y = linear_attention_readout(q, state, normalizer, self.cfg.eps)  # (B,H,T,D)
        out = self.o_proj(merge_heads(y))  # (B, T, C)
        if not inspect:
            return out
        cache.update(q=q, k=k, v=v, attn=weights, scores=scores, head_out=y)
        return out, cache

    def step(
        self, x: torch.Tensor, state: torch.Tensor, normalizer: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """One recurrent step of linear attention.

        Args:
            x: (B, 1, C) the current token's residual; state: (B, H, d_head, d_head)
                S_{i-1}; normalizer: (B, H, d_head) z_{i-1}.

        Returns:
            ``(out, state, normalizer)``: (B, 1, C), S_i, z_i.

        Raises:
            RuntimeError: for softmax attention, which has no fixed-size state.
        """
        if self.cfg.attention != "linear":
            raise RuntimeError("only linear attention has a recurrent step")
        q, k, v = self.qkv(x)  # (B, H, 1, d_head)
        phi_k = feature_map(k[:, :, 0])  # (B, H, d_head)
        state = state + phi_k.unsqueeze(-1) * v[:, :, 0].unsqueeze(-2)  # (B, H, D, D)
        normalizer = normalizer + phi_k  # (B, H, d_head)
        y = linear_attention_readout(q[:, :, 0], state, normalizer, self.cfg.eps)  # (B,H,D)
        return self.o_proj(merge_heads(y.unsqueeze(2))), state, normalizer  # (B, 1, C)
