"""Causal linear attention in chunks: O(T·d) memory instead of one state per token.

y_i = phi(q_i)^T S_i / (phi(q_i)^T z_i + eps) with S_i = sum_{j<=i} phi(k_j) v_j^T and
z_i = sum_{j<=i} phi(k_j) (Katharopoulos et al. 2020) needs every prefix state S_i only
if it is computed token by token. Split T into chunks of C tokens (the chunkwise form
of Yang et al. 2024, "Gated Linear Attention", sec. 2; fast-transformers'
``causal_product`` plays the same role in CUDA): inside a chunk the causal part is the
masked (C x C) product (phi(Q) phi(K)^T ⊙ M) V, and everything before the chunk is the
state carried into it, S at the chunk's start (one (d_head x d_head) matrix per chunk).

The carried states come from a cumulative sum over the chunk axis of each chunk's
phi(K)^T V, so the whole computation is a pad, reshapes, matrix products and one
cumsum: it traces to ONNX with a symbolic T (a Python loop over chunks would unroll
at the example's length; ``export/graphs.py`` says why that graph uses the
TorchScript exporter). Memory per head: (T/C)·d_head² for the carried states plus
T·C for the intra-chunk products, against T·d_head² for every prefix state.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

CHUNK = 64  # tokens per chunk: T·C scores and (T/C)·d² carried states per head


def chunked_causal_product(
    phi_q: torch.Tensor, phi_k: torch.Tensor, v: torch.Tensor, eps: float, chunk: int = CHUNK
) -> torch.Tensor:
    """Causal linear attention, chunk by chunk.

    Args:
        phi_q, phi_k: the feature map of the queries and keys, (B, H, T, d_head), > 0.
        v: the values, (B, H, T, d_head).
        eps: the normalizer epsilon added to phi(q_i)^T z_i.
        chunk: tokens per chunk C; T is padded with zeros to a multiple of C (padded
            keys sit after every real token, so causality keeps them out) and cut back.

    Returns:
        y (B, H, T, d_head), equal to the parallel and recurrent forms up to float32
        rounding (tests/models/test_causal_product.py).
    """
    B, H, T, D = phi_q.shape
    pad = (-T) % chunk  # zeros after T up to a multiple of C
    q, k, v = (F.pad(x, (0, 0, 0, pad)) for x in (phi_q, phi_k, v))  # (B, H, N * C, d_head)
    q, k, v = (x.reshape(B, H, -1, chunk, D) for x in (q, k, v))  # (B, H, N, C, d_head)
    scores = (q @ k.transpose(-2, -1)).tril()  # (B, H, N, C, C), causal within a chunk
    kv = k.transpose(-2, -1) @ v  # (B, H, N, d_head, d_head): each chunk's sum phi(k) v^T
    ksum = k.sum(-2)  # (B, H, N, d_head): each chunk's sum phi(k)
    # the state and normalizer carried into chunk n: the sums of chunks 0 .. n-1
    state = torch.cat([torch.zeros_like(kv[:, :, :1]), kv[:, :, :-1]], 2).cumsum(2)
    normalizer = torch.cat([torch.zeros_like(ksum[:, :, :1]), ksum[:, :, :-1]], 2).cumsum(2)
    numerator = scores @ v + q @ state  # (B, H, N, C, d_head)
    denominator = scores.sum(-1) + (q @ normalizer.unsqueeze(-1)).squeeze(-1)  # (B, H, N, C)
    y = numerator / (denominator.unsqueeze(-1) + eps)  # (B, H, N, C, d_head)
    return y.reshape(B, H, -1, D)[:, :, :T]  # (B, H, T, d_head)
