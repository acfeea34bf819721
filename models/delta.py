"""DeltaNet: linear attention whose state is updated by the delta rule.

One token at a time (Schlag et al. 2021, arXiv 2102.11174; Yang et al. 2024, arXiv
2406.06484), with the state S_t (d_head x d_head, key rows, value columns):

    S_t = S_{t-1} + beta_t k_t (v_t - S_{t-1}^T k_t)^T        "erase, then write"
    y_t = S_t^T q_t

S_{t-1}^T k_t is what the state currently returns for key k_t; the update replaces a
beta_t share of it by v_t. q and k pass through SiLU and L2 normalisation, so k_t k_t^T
is a projection and the state cannot grow without bound; there is no normalizer.
beta_t = sigmoid(W_beta x_t) is one number per head and token. A causal depthwise
convolution of width 4 (:class:`ShortConv`, the recipe of Zoology and Based) mixes each
of q, k, v over the last four tokens before that.

The parallel (chunked) form is Yang et al.'s WY / UT transform: within a chunk of c
tokens, with L = tril(diag(beta) K K^T, -1),

    W = (I + L)^-1 diag(beta) K,   U = (I + L)^-1 diag(beta) V
    u = U - W S,   Y = Q S + (Q K^T * M) u,   S <- S + K^T u

(M the causal mask, diagonal included). Over a whole sequence this says
Y = A V with the implied attention A = (Q K^T * M)(I + L)^-1 diag(beta) (issue #22).
The triangular solves are forward substitutions (stable: a Neumann series for
(I + L)^-1 is not).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

CONV_WIDTH = 4  # the short convolution's width (tokens)
# Training chunk length (tokens): the shipped T = 64 is one chunk, one triangular solve per
# layer. Measured (one thread, B = 64, T = 64, forward + backward, beside a softmax model in
# the same process): delta / softmax step time 1.47 at chunk 64, 1.59 at 32, 1.61 at 16.
CHUNK = 64


def l2_normalize(x: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """x / sqrt(sum(x^2) + eps) over the last axis: (..., d_head) -> (..., d_head)."""
    return x * torch.rsqrt((x * x).sum(-1, keepdim=True) + eps)


class ShortConv(nn.Module):
    """Causal depthwise convolution over time: y_t = sum_{i<width} w_i * x_{t-width+1+i}.

    ``weight`` (C, 1, width) as ``nn.Conv1d(C, C, width, groups=C, bias=False)``.
    """

    def __init__(self, channels: int, width: int = CONV_WIDTH):
        super().__init__()
        self.width = width
        self.weight = nn.Parameter(torch.empty(channels, 1, width))
        nn.init.uniform_(self.weight, -1 / math.sqrt(width), 1 / math.sqrt(width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, C) -> (B, T, C), zeros before the first token."""
        x = F.pad(x.transpose(1, 2), (self.width - 1, 0))  # (B, C, T + width - 1)
        return F.conv1d(x, self.weight, groups=x.shape[1]).transpose(1, 2)  # (B, T, C)

    def step(self, x: torch.Tensor, cache: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """One token: x (B, 1, C), cache (B, width - 1, C) the previous inputs (zeros at the
        start) -> ``(y (B, 1, C), cache (B, width - 1, C))``."""
        window = torch.cat([cache, x], dim=1)  # (B, width, C)
        y = (window * self.weight[:, 0, :].transpose(0, 1)).sum(1, keepdim=True)  # (B, 1, C)
        return y, window[:, 1:]


def delta_step(q, k, v, beta, state):
    """One token of the delta rule: q, k, v (B, H, d_head), beta (B, H), state S_{t-1}
    (B, H, d_head, d_head) -> ``(y_t (B, H, d_head), S_t (B, H, d_head, d_head))``."""
    read = (k.unsqueeze(-2) @ state).squeeze(-2)  # (B, H, d_head): S_{t-1}^T k_t
    write = beta.unsqueeze(-1) * (v - read)  # (B, H, d_head)
    state = state + k.unsqueeze(-1) * write.unsqueeze(-2)  # (B, H, d_head, d_head)
    return (q.unsqueeze(-2) @ state).squeeze(-2), state  # (B, H, d_head)


def chunk_split(x: torch.Tensor, chunk: int) -> torch.Tensor:
    """(B, H, T, ...) -> (B, H, N, chunk, ...), zero-padded at the end to N * chunk."""
    T = x.shape[2]
    n = (T + chunk - 1) // chunk  # no branch, no modulo: an exported graph keeps T symbolic
    x = F.pad(x, [0, 0] * (x.dim() - 3) + [0, n * chunk - T])
    return x.reshape(*x.shape[:2], n, chunk, *x.shape[3:])


def chunked_delta(q, k, v, beta, chunk: int = CHUNK):
    """The chunked parallel form (torch's triangular solve; training and eager use).

    Args:
        q, k, v: (B, H, T, d_head); beta: (B, H, T) in (0, 1); chunk: tokens per chunk.

    Returns:
        ``(y (B, H, T, d_head), S_T (B, H, d_head, d_head))``.
    """
    T = q.shape[2]
    q, k, v = (chunk_split(x, chunk) for x in (q, k, v))  # (B, H, N, c, d_head)
    beta = chunk_split(beta.unsqueeze(-1), chunk)  # (B, H, N, c, 1); 0 in the padding
    kb = k * beta  # (B, H, N, c, d_head)
    lower = (kb @ k.transpose(-1, -2)).tril(-1)  # (B, H, N, c, c)
    eye = torch.eye(chunk, dtype=q.dtype, device=q.device)
    rhs = torch.cat([kb, v * beta], dim=-1)  # (B, H, N, c, 2 d_head)
    wu = torch.linalg.solve_triangular(eye + lower, rhs, upper=False, unitriangular=True)
    W, U = wu.chunk(2, dim=-1)  # (B, H, N, c, d_head) each
    qk = (q @ k.transpose(-1, -2)).tril()  # (B, H, N, c, c)
    B, H, N, c, D = q.shape
    S = q.new_zeros(B, H, D, D)  # (B, H, d_head, d_head)
    ys = []
    for i in range(N):
        u = U[:, :, i] - W[:, :, i] @ S  # (B, H, c, d_head)
        ys.append(q[:, :, i] @ S + qk[:, :, i] @ u)  # (B, H, c, d_head)
        S = S + k[:, :, i].transpose(-1, -2) @ u  # (B, H, d_head, d_head)
    y = torch.stack(ys, 2).flatten(2, 3)[:, :, :T]  # (B, H, T, d_head)
    return y, S


def recurrent_delta(q, k, v, beta):
    """The RNN form, one token at a time (reference loop): q, k, v (B, H, T, d_head),
    beta (B, H, T) -> ``(y (B, H, T, d_head), states (B, H, T, d_head, d_head))``, the
    state S_t after each token."""
    B, H, T, D = q.shape
    S = q.new_zeros(B, H, D, D)  # (B, H, d_head, d_head)
    ys, states = [], []
    for t in range(T):
        y, S = delta_step(q[:, :, t], k[:, :, t], v[:, :, t], beta[:, :, t], S)
        ys.append(y)
        states.append(S)
    return torch.stack(ys, 2), torch.stack(states, 2)
