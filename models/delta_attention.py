"""The delta rule's mixing rule for :class:`models.attention.MultiHeadAttention`.

The ``delta`` entry of ``models.attention.ATTENTION_REGISTRY``: the projections are the
shared ones; this class holds what differs (the chunked and exported forms of the delta
rule, ``models/delta.py`` and ``models/delta_graph.py``, and its one-token step).
"""

from __future__ import annotations

import torch

from models.config import ModelConfig
from models.delta import chunked_delta, delta_step
from models.delta_graph import inspect_delta, scan_delta


class DeltaAttention:
    """DeltaNet (``models/delta.py``): the delta rule on a d_head x d_head state per head,
    beta_t = sigmoid(W_beta x_t); q, k through a short convolution, SiLU and L2 norm."""

    recurrent = True  # fixed-size state S_t (and the convolution's last inputs)
    short_conv = True  # MultiHeadAttention adds the convolutions and W_beta

    def __init__(self, cfg: ModelConfig):
        self.cfg = cfg

    def parallel(self, q, k, v, beta):
        """q, k, v (B, H, T, d_head), beta (B, H, T) -> ``(output, weights, scores)``:
        output (B, H, T, d_head); weights (B, H, T, T) the implied attention
        A = (QK^T * M)(I + L)^-1 diag(beta), causal, ``weights @ v == output``; scores
        (B, H, T, T) = QK^T before the mask."""
        y, _, attn = inspect_delta(q, k, v, beta)  # (B, H, T, d_head), ..., (B, H, T, T)
        return y, attn, q @ k.transpose(-2, -1)

    def mix(self, q, k, v, inspect: bool, training: bool, beta=None):
        """q, k, v (B, H, T, d_head), beta (B, H, T) -> ``(y (B, H, T, d_head), named
        intermediates)``.

        Training (and eager inference) solve each chunk with torch's triangular solve;
        an exported graph (torch.export) uses the forward
        substitution of ``models/delta_graph.py``, an ONNX Scan over tokens. Inspecting adds
        ``attn``, the implied attention A (B, H, T, T) with ``attn @ v == y`` (rows need not
        sum to 1, entries may be negative), ``scores`` QK^T before the mask, ``beta`` and
        ``state`` S_t after every token (B, H, T, d_head, d_head).
        """
        exporting = torch.compiler.is_compiling() or torch.compiler.is_exporting()
        if inspect:
            width = self.cfg.context_length if exporting else None  # see inspect_delta
            y, states, attn = inspect_delta(q, k, v, beta, width)  # (B, H, T, d_head), ...
            scores = q @ k.transpose(-2, -1)  # (B, H, T, T)
            return y, {"attn": attn, "scores": scores, "beta": beta, "state": states}
        if exporting:
            return scan_delta(q, k, v, beta), {}  # (B, H, T, d_head)
        y, _ = chunked_delta(q, k, v, beta)  # (B, H, T, d_head)
        return y, {}

    def step(self, q, k, v, beta, state):
        """One token: q, k, v (B, H, d_head), beta (B, H), state S_{t-1} (B, H, d_head,
        d_head) -> ``(y_t (B, H, d_head), S_t)``."""
        return delta_step(q, k, v, beta, state)
