"""Multi-head attention: shared projections, a mixing rule picked by a string key.

As in fast-transformers' ``attention_registry``, :data:`ATTENTION_REGISTRY` maps an
attention kind (``cfg.attention``) to its mixing rule; the query/key/value/output
projections of :class:`MultiHeadAttention` are shared and only the mixing differs:

* ``softmax`` (:class:`SoftmaxAttention`): softmax(QK^T / sqrt(d_head) + causal mask) V
  (Vaswani et al. 2017).
* ``linear`` (:class:`LinearAttention`): a feature map phi (an object from
  ``models/feature_maps.py``, default phi(x) = elu(x) + 1) and
  y_i = phi(q_i)^T S_i / (phi(q_i)^T z_i + eps), S_i = sum_{j<=i} phi(k_j) v_j^T,
  z_i = sum_{j<=i} phi(k_j)  (Katharopoulos et al. 2020, "Transformers are RNNs"); its
  fast (inference) form runs in chunks of 64 tokens with one carried state per chunk
  (``models/causal_product.py``).
* ``delta`` (:class:`~models.delta_attention.DeltaAttention`, ``models/delta_attention.py``):
  DeltaNet, the delta rule on a d_head x d_head state (Schlag et al. 2021, Yang et al. 2024).

As in The Annotated Transformer, the parallel forms return the weights beside the
output, ``(output, weights, scores)``; the weights are never hidden inside a fused
kernel. The recurrent forms return ``(output, state, normalizer)``.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from models.causal_product import CHUNK, chunked_causal_product
from models.config import ATTENTION_KINDS, ModelConfig
from models.delta import ShortConv, l2_normalize
from models.delta_attention import DeltaAttention
from models.feature_maps import FeatureMap, elu_feature_map
from models.heads import causal_mask, merge_heads, split_heads
from models.rotary import apply_rotary, rotation


class SoftmaxAttention:
    """Causal scaled dot-product attention (Vaswani et al. 2017); no recurrent form."""

    recurrent = False  # no fixed-size state: a step graph needs a key/value cache

    def __init__(self, cfg: ModelConfig, layer: int = 0):
        self.cfg, self.window = cfg, cfg.window_of(layer)  # this layer's sliding window

    def parallel(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor):
        """q, k, v (B, H, T, d_head) -> ``(output, weights, scores)``: output (B, H, T,
        d_head); weights (B, H, T, T), rows sum to 1, zero above the diagonal; scores
        (B, H, T, T), the scaled logits QK^T / sqrt(d_head) before the mask."""
        T, D = q.shape[-2], q.shape[-1]
        scores = q @ k.transpose(-2, -1) / math.sqrt(D)  # (B, H, T, T)
        allowed = causal_mask(T, q.device, self.window)  # (T, T)
        masked = scores.masked_fill(~allowed, float("-inf"))  # (B, H, T, T)
        weights = torch.softmax(masked, dim=-1)  # (B, H, T, T)
        return weights @ v, weights, scores  # (B, H, T, d_head)

    def mix(self, q, k, v, inspect: bool, training: bool):
        """q, k, v (B, H, T, d_head) -> ``(y (B, H, T, d_head), named intermediates)``."""
        y, weights, scores = self.parallel(q, k, v)  # (B, H, T, d_head)
        return y, {"attn": weights, "scores": scores}

    def step(self, q, k, v, state, normalizer):
        """Raises RuntimeError: softmax attention has no fixed-size state."""
        raise RuntimeError("only linear attention has a recurrent step")


class LinearAttention:
    """Causal linear attention with feature map ``feature_map`` (Katharopoulos et al. 2020).

    Attributes:
        feature_map: the :class:`~models.feature_maps.FeatureMap` phi.
        eps: the normalizer epsilon, ``cfg.attn_eps``.
        chunk: tokens per chunk of the fast form (``models/causal_product.py``); None
            for the earlier fast form, every prefix state then a readout (T·d_head²
            memory), which the bench exports as its "before" graph.
    """

    recurrent = True  # fixed-size state (S_i, z_i): a one-token step graph

    def __init__(self, cfg: ModelConfig, feature_map: FeatureMap = elu_feature_map):
        self.cfg, self.feature_map, self.eps = cfg, feature_map, cfg.attn_eps
        self.chunk: int | None = CHUNK

    def phi(self, x: torch.Tensor) -> torch.Tensor:
        """The feature map on a tensor of any shape."""
        return self.feature_map.torch(x)

    def parallel(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor):
        """The parallel (T x T) form, for display: q, k, v (B, H, T, d_head) ->
        ``(output, weights, scores)``: output (B, H, T, d_head); weights (B, H, T, T) the
        implied matrix phi(q_i)^T phi(k_j) / (phi(q_i)^T z_i + eps), causal, so
        ``weights @ v == output``; scores (B, H, T, T) = phi(Q) phi(K)^T before the mask."""
        T = q.shape[-2]
        scores = self.phi(q) @ self.phi(k).transpose(-2, -1)  # (B, H, T, T)
        masked = scores * causal_mask(T, q.device)  # (B, H, T, T)
        weights = masked / (masked.sum(dim=-1, keepdim=True) + self.eps)  # (B, H, T, T)
        return weights @ v, weights, scores  # (B, H, T, d_head)

    def states(self, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """All prefix states by cumulative sums (for the inspect graph, which shows them;
        T x d_head^2 floats per head): k, v (B, H, T, d_head) ->
        ``(state, normalizer)``: S_i = sum_{j<=i} phi(k_j) v_j^T (B, H, T, d_head, d_head),
        z_i = sum_{j<=i} phi(k_j) (B, H, T, d_head)."""
        phi_k = self.phi(k)  # (B, H, T, d_head)
        outer = phi_k.unsqueeze(-1) * v.unsqueeze(-2)  # (B, H, T, d_head, d_head)
        return outer.cumsum(dim=2), phi_k.cumsum(dim=2)  # (B,H,T,D,D), (B,H,T,D)

    def readout(self, q: torch.Tensor, state: torch.Tensor, normalizer: torch.Tensor):
        """y_i = phi(q_i)^T S_i / (phi(q_i)^T z_i + eps): q (..., d_head), state
        (..., d_head, d_head), normalizer (..., d_head) -> (..., d_head)."""
        phi_q = self.phi(q)  # (..., d_head)
        numerator = (phi_q.unsqueeze(-2) @ state).squeeze(-2)  # (..., d_head)
        denominator = (phi_q * normalizer).sum(-1, keepdim=True) + self.eps  # (..., 1)
        return numerator / denominator  # (..., d_head)

    def step(self, q, k, v, state, normalizer):
        """One token: q, k, v (B, H, d_head), state S_{i-1} (B, H, d_head, d_head),
        normalizer z_{i-1} (B, H, d_head) -> ``(y_i (B, H, d_head), S_i, z_i)``."""
        phi_k = self.phi(k)  # (B, H, d_head)
        state = state + phi_k.unsqueeze(-1) * v.unsqueeze(-2)  # (B, H, d_head, d_head)
        normalizer = normalizer + phi_k  # (B, H, d_head)
        return self.readout(q, state, normalizer), state, normalizer  # (B, H, d_head)

    def recurrent_loop(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor):
        """The RNN form, one token at a time (reference loop): q, k, v (B, H, T, d_head) ->
        ``(output, state, normalizer)``: (B, H, T, d_head), (B, H, T, d_head, d_head) and
        (B, H, T, d_head), the state S_i and normalizer z_i after each token."""
        B, H, T, D = q.shape
        S = q.new_zeros(B, H, D, D)  # (B, H, d_head, d_head)
        z = q.new_zeros(B, H, D)  # (B, H, d_head)
        outputs, states, normalizers = [], [], []
        for i in range(T):
            y, S, z = self.step(q[:, :, i], k[:, :, i], v[:, :, i], S, z)  # (B, H, d_head)
            outputs.append(y)
            states.append(S)
            normalizers.append(z)
        return torch.stack(outputs, 2), torch.stack(states, 2), torch.stack(normalizers, 2)

    def mix(self, q, k, v, inspect: bool, training: bool):
        """q, k, v (B, H, T, d_head) -> ``(y (B, H, T, d_head), named intermediates)``.

        Training and inspecting use the parallel (T x T) form (same numbers; at the
        training length T = 64 one chunk, where it trained faster than the chunked form:
        ~0.38 vs ~0.59 s per forward and backward at B = 32, 2 cores). Inspecting adds
        every prefix state (``states``). Inference (the fast graph) uses the chunked form
        (``models/causal_product.py``): no T x T tensor and no state per token, O(T·d)
        memory; it names nothing.
        """
        if not (inspect or training) and self.chunk:
            y = chunked_causal_product(self.phi(q), self.phi(k), v, self.eps, self.chunk)
            return y, {}  # (B, H, T, d_head)
        if not (inspect or training):  # chunk None: every prefix state, then the readout
            state, normalizer = self.states(k, v)  # (B,H,T,D,D), (B,H,T,D)
            return self.readout(q, state, normalizer), {}  # (B, H, T, d_head)
        y, weights, scores = self.parallel(q, k, v)  # (B, H, T, d_head)
        cache = {}
        if inspect:
            state, normalizer = self.states(k, v)  # (B,H,T,D,D), (B,H,T,D)
            cache.update(phi_q=self.phi(q), phi_k=self.phi(k))  # (B, H, T, d_head)
            cache.update(state=state, normalizer=normalizer)
        return y, {**cache, "attn": weights, "scores": scores}


# Attention kind -> mixing rule (fast-transformers' ``AttentionRegistry``); the keys are
# ``models.config.ATTENTION_KINDS``, the kinds a config accepts.
ATTENTION_REGISTRY: dict[str, type] = {
    "softmax": SoftmaxAttention,
    "linear": LinearAttention,
    "delta": DeltaAttention,
}
assert tuple(ATTENTION_REGISTRY) == ATTENTION_KINDS, "register every kind a config accepts"


def build_mixing(cfg: ModelConfig, layer: int = 0):
    """The mixing rule registered for ``cfg.attention`` (softmax: with layer ``layer``'s
    sliding window)."""
    if cfg.attention == "softmax":
        return SoftmaxAttention(cfg, layer)
    return ATTENTION_REGISTRY[cfg.attention](cfg)


class MultiHeadAttention(nn.Module):
    """Shared Q/K/V/O projections around the mixing rule ``ATTENTION_REGISTRY[cfg.attention]``.

    ``forward(x)`` maps (B, T, C) -> (B, T, C). With ``inspect=True`` it also
    returns a dict of named intermediates (see ``models/contract.py``) for one
    layer, each with a leading batch axis: ``q, k, v, head_out`` (B, H, T, d_head),
    ``attn, scores`` (B, H, T, T) and, for linear attention, ``phi_q, phi_k``,
    ``state`` (B, H, T, d_head, d_head), ``normalizer`` (B, H, T, d_head).
    """

    def __init__(self, cfg: ModelConfig, layer: int = 0):
        super().__init__()
        self.cfg = cfg
        self.mixing = build_mixing(cfg, layer)
        C, kv, qkv_bias = cfg.d_model, cfg.kv_heads * cfg.d_head, cfg.has_qkv_bias
        self.q_proj = nn.Linear(C, C, bias=qkv_bias)
        self.k_proj = nn.Linear(C, kv, bias=qkv_bias)  # (H_kv d_head, C): grouped-query
        self.v_proj = nn.Linear(C, kv, bias=qkv_bias)
        self.o_proj = nn.Linear(C, C, bias=cfg.bias)
        self.short_conv = getattr(self.mixing, "short_conv", False)
        if self.short_conv:  # DeltaNet: causal convolutions on q, k, v and beta's W_beta
            self.q_conv, self.k_conv, self.v_conv = ShortConv(C), ShortConv(C), ShortConv(C)
            self.b_proj = nn.Linear(C, cfg.n_head, bias=True)

    def qkv(self, x: torch.Tensor, positions: torch.Tensor | None = None):
        """Project and split heads: (B, T, C) -> three (B, H, T, d_head); for DeltaNet
        through the short convolutions, and q, k through SiLU and L2 normalisation; with
        rotary positions q and k rotated by ``positions`` (T,) int64 (default 0 .. T-1)."""
        q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)  # (B, T, C), (B, T, H_kv D)
        if self.short_conv:
            q, k, v = self.q_conv(q), self.k_conv(k), self.v_conv(v)  # (B, T, C)
        return self.heads(q, k, v, positions)

    def heads(self, q, k, v, positions=None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(B, T, C) q and (B, T, H_kv d_head) k, v -> (B, H, T, d_head) each.

        DeltaNet's q, k go through SiLU + L2 norm. RoPE (``models/rotary.py``) rotates q
        and k; grouped-query attention repeats each key/value head for the H / H_kv
        query heads that share it (query head h reads key head h // (H / H_kv)).
        """
        cfg = self.cfg
        q = split_heads(q, cfg.n_head)  # (B, H, T, d_head)
        k, v = split_heads(k, cfg.kv_heads), split_heads(v, cfg.kv_heads)  # (B, H_kv, T, D)
        if self.short_conv:
            q, k = l2_normalize(F.silu(q)), l2_normalize(F.silu(k))  # (B, H, T, d_head)
        if cfg.d_rotary:
            if positions is None:
                positions = torch.arange(q.shape[2], device=q.device)  # (T,)
            cos, sin = rotation(positions, cfg.d_rotary, cfg.rope_theta, cfg.rope_scale)
            q, k = apply_rotary(q, cos, sin), apply_rotary(k, cos, sin)  # (B, H|H_kv, T, D)
        group = cfg.n_head // cfg.kv_heads
        if group > 1:
            k = k.repeat_interleave(group, dim=1)  # (B, H, T, d_head)
            v = v.repeat_interleave(group, dim=1)  # (B, H, T, d_head)
        return q, k, v

    def beta(self, x: torch.Tensor) -> torch.Tensor:
        """DeltaNet's write strength beta = sigmoid(W_beta x): (B, T, C) -> (B, H, T)."""
        return torch.sigmoid(self.b_proj(x)).transpose(1, 2)  # (B, H, T)

    def forward(self, x: torch.Tensor, inspect: bool = False):
        """(B, T, C) -> (B, T, C); with ``inspect=True`` also the dict of named intermediates."""
        q, k, v = self.qkv(x)  # (B, H, T, d_head) each
        gates = {"beta": self.beta(x)} if self.short_conv else {}  # (B, H, T)
        y, cache = self.mixing.mix(q, k, v, inspect, self.training, **gates)  # (B, H, T, D)
        out = self.o_proj(merge_heads(y))  # (B, T, C)
        if not inspect:
            return out
        cache.update(q=q, k=k, v=v, head_out=y)
        return out, cache

    def step(
        self, x: torch.Tensor, state: torch.Tensor, carried: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """One recurrent step (linear attention, DeltaNet).

        Args:
            x: (B, 1, C) the current token's residual; state: (B, H, d_head, d_head)
                S_{i-1}; carried: linear attention's normalizer z_{i-1} (B, H, d_head), or
                DeltaNet's convolution inputs of the last three tokens (B, 3, 3, C): q, k, v
                projections before the convolution (zeros at the start).

        Returns:
            ``(out, state, carried)``: (B, 1, C), S_i and z_i (or the shifted window).

        Raises:
            RuntimeError: for softmax attention, which has no fixed-size state.
        """
        if not self.mixing.recurrent:
            raise RuntimeError("only linear attention and DeltaNet have a recurrent step")
        if self.short_conv:
            return self._delta_step(x, state, carried)
        q, k, v = self.qkv(x)  # (B, H, 1, d_head)
        y, state, normalizer = self.mixing.step(
            q[:, :, 0], k[:, :, 0], v[:, :, 0], state, carried
        )  # (B, H, d_head), (B, H, D, D), (B, H, D)
        return self.o_proj(merge_heads(y.unsqueeze(2))), state, normalizer  # (B, 1, C)

    def _delta_step(self, x, state, window):
        """DeltaNet's step: x (B, 1, C), state (B, H, D, D), window (B, 3, 3, C) ->
        ``(out (B, 1, C), S_i, window')``."""
        convs = (self.q_conv, self.k_conv, self.v_conv)
        projs = (self.q_proj(x), self.k_proj(x), self.v_proj(x))  # (B, 1, C) each
        stepped = [
            conv.step(p, window[:, j]) for j, (conv, p) in enumerate(zip(convs, projs, strict=True))
        ]
        q, k, v = self.heads(*(y for y, _ in stepped))  # (B, H, 1, d_head) each
        beta = self.beta(x)[:, :, 0]  # (B, H)
        y, state = self.mixing.step(q[:, :, 0], k[:, :, 0], v[:, :, 0], beta, state)
        window = torch.stack([w for _, w in stepped], dim=1)  # (B, 3, 3, C)
        return self.o_proj(merge_heads(y.unsqueeze(2))), state, window  # (B, 1, C)
