"""A small decoder-only language model (pre-LN, GPT-2 layout).

Token embedding + positional encoding (sinusoidal, Vaswani et al. 2017 section
3.5, or learned as in GPT-2), ``n_layer`` pre-LN blocks of attention and a GELU
MLP (exact, or GPT-2's tanh approximation), a final LayerNorm and an unembedding
tied to the token embedding (or not). Parameter names follow nanoGPT where they can
so that nanoGPT checkpoints and Hugging Face folders map onto it
(``upload/formats/nanogpt.py``, ``upload/formats/hf_gpt2.py``).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from models.attention import MultiHeadAttention
from models.config import ModelConfig
from models.contract import BLOCK_HOOKS, inspect_outputs
from models.norms import make_norm


def sinusoidal_encoding(positions: torch.Tensor, d_model: int) -> torch.Tensor:
    """PE[pos, 2i] = sin(pos / 10000^(2i/d_model)), PE[pos, 2i+1] = cos(...).

    Args:
        positions: (T,) integer positions; d_model: even width C.

    Returns:
        (T, C) float32 (Vaswani et al. 2017, section 3.5).
    """
    i = torch.arange(0, d_model, 2, dtype=torch.float32, device=positions.device)  # (C/2,)
    inv_freq = torch.exp(-math.log(10000.0) * i / d_model)  # (C/2,)
    angles = positions.to(torch.float32).unsqueeze(-1) * inv_freq  # (T, C/2)
    pe = torch.stack([angles.sin(), angles.cos()], dim=-1)  # (T, C/2, 2)
    return pe.flatten(-2)  # (T, C)


class MLP(nn.Module):
    """Position-wise feed-forward: (B, T, C) -> (B, T, d_mlp) -> activation -> (B, T, C).

    ``cfg.activation``: ``"gelu"`` is x Phi(x), exact; ``"gelu_new"`` is GPT-2's tanh
    approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (Hendrycks & Gimpel
    2016, section 2), torch's ``approximate="tanh"``; ``"silu"`` is x sigmoid(x).
    With ``cfg.gated_mlp`` the hidden layer is act(x W_gate^T) * (x W_fc^T), a gated
    linear unit (SwiGLU with SiLU; Shazeer 2020, Llama's gate/up/down projections).
    """

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.c_fc = nn.Linear(cfg.d_model, cfg.d_mlp, bias=cfg.bias)
        if cfg.gated_mlp:
            self.c_gate = nn.Linear(cfg.d_model, cfg.d_mlp, bias=cfg.bias)
        self.c_proj = nn.Linear(cfg.d_mlp, cfg.d_model, bias=cfg.bias)
        self.activation = cfg.activation
        self.gated = cfg.gated_mlp

    def act(self, x: torch.Tensor) -> torch.Tensor:
        """The activation of ``cfg.activation`` on any shape."""
        if self.activation == "silu":
            return F.silu(x)
        return F.gelu(x, approximate="tanh" if self.activation == "gelu_new" else "none")

    def hidden(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, C) -> act(x W_fc^T + b_fc), or act(x W_gate^T) * x W_fc^T: (B, T, d_mlp)."""
        if self.gated:
            return self.act(self.c_gate(x)) * self.c_fc(x)  # (B, T, d_mlp)
        return self.act(self.c_fc(x))  # (B, T, d_mlp)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, C) -> (B, T, C)."""
        return self.c_proj(self.hidden(x))  # (B, T, C)


class Block(nn.Module):
    """Pre-LN block: x + attn(ln_1(x)), then x + mlp(ln_2(x)); with
    ``cfg.parallel_residual`` (GPT-NeoX) x + attn(ln_1(x)) + mlp(ln_2(x))."""

    def __init__(self, cfg: ModelConfig, layer: int = 0):
        super().__init__()
        self.ln_1 = make_norm(cfg)
        self.attn = MultiHeadAttention(cfg, layer)
        self.ln_2 = make_norm(cfg)
        self.mlp = MLP(cfg)
        self.parallel = cfg.parallel_residual

    def mlp_input(self, resid_pre: torch.Tensor, resid_mid: torch.Tensor) -> torch.Tensor:
        """What ln_2 reads (B, T, C): resid_mid, or the block's input when parallel."""
        return resid_pre if self.parallel else resid_mid

    def forward(self, x: torch.Tensor, inspect: bool = False):
        """(B, T, C) -> (B, T, C); with ``inspect=True`` also this layer's named tensors.

        The cache holds the attention intermediates of ``MultiHeadAttention.forward``,
        ``attn_in`` (B, T, C), the layer-normed input the projections see, and ``hooks``:
        ``contract.BLOCK_HOOKS`` -> (B, T, C) (``mlp.hidden`` (B, T, d_mlp)).
        """
        if not inspect:
            mid = x + self.attn(self.ln_1(x))  # (B, T, C)
            return mid + self.mlp(self.ln_2(self.mlp_input(x, mid)))  # (B, T, C)
        h = self.ln_1(x)  # (B, T, C)
        a, cache = self.attn(h, inspect=True)  # (B, T, C)
        mid = x + a  # (B, T, C)
        h2 = self.ln_2(self.mlp_input(x, mid))  # (B, T, C)
        hidden = self.mlp.hidden(h2)  # (B, T, d_mlp)
        m = self.mlp.c_proj(hidden)  # (B, T, C)
        out = mid + m  # (B, T, C)
        cache["attn_in"] = h
        hooks = (x, h, a, mid, h2, hidden, m, out)  # contract.BLOCK_HOOKS, in order
        cache["hooks"] = dict(zip(BLOCK_HOOKS, hooks, strict=True))
        return out, cache


class Transformer(nn.Module):
    """Decoder-only transformer language model.

    ``forward(input_ids)`` maps int64 (B, T) to logits (B, T, V).
    ``forward(input_ids, inspect=True)`` returns ``(logits, cache)`` where the
    cache holds the contract's named tensors for batch element 0, stacked over
    layers: ``attn`` (L, H, T, T), ``q`` (L, H, T, d_head), ..., ``pos_enc`` (T, C).
    """

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.wte = nn.Embedding(cfg.vocab_size, cfg.d_model)
        if cfg.position_scheme == "learned":
            self.wpe = nn.Embedding(cfg.context_length, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg, layer) for layer in range(cfg.n_layer))
        self.ln_f = make_norm(cfg)
        self.lm_head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        if cfg.tie_weights:
            self.lm_head.weight = self.wte.weight
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def num_parameters(self) -> int:
        """Number of distinct parameters (tied weights counted once)."""
        return sum(p.numel() for p in self.parameters())

    def embed(self, input_ids: torch.Tensor) -> torch.Tensor:
        """Token embedding (B, T) -> (B, T, C), times sqrt(d_model) if ``scale_embedding``."""
        x = self.wte(input_ids)  # (B, T, C)
        return x * math.sqrt(self.cfg.d_model) if self.cfg.scale_embedding else x

    def positional_encoding(self, positions: torch.Tensor) -> torch.Tensor:
        """(T,) int64 positions -> (T, C) encoding added to the token embedding (zeros
        for rotary positions, which turn q and k inside attention instead)."""
        if self.cfg.position_scheme == "rotary":
            return torch.zeros(positions.shape[0], self.cfg.d_model, device=positions.device)
        if self.cfg.position_scheme == "learned":
            return self.wpe(positions)  # (T, C)
        return sinusoidal_encoding(positions, self.cfg.d_model)  # (T, C)

    def forward(self, input_ids: torch.Tensor, inspect: bool = False):
        """int64 (B, T) token ids -> logits (B, T, V).

        With ``inspect=True`` returns ``(logits, cache)``: the contract's named tensors
        (``models/contract.py``) of the first batch row, stacked over layers, e.g.
        ``attn`` (L, H, T, T), ``q`` (L, H, T, d_head), plus ``pos_enc`` (T, C) and the
        block outputs ``blocks.{l}.{hook}`` (T, C) (``contract.block_outputs``).
        """
        T = input_ids.shape[1]
        pos_enc = self.positional_encoding(torch.arange(T, device=input_ids.device))  # (T, C)
        x = self.embed(input_ids) + pos_enc  # (B, T, C)
        caches = []
        for block in self.blocks:
            if inspect:
                x, cache = block(x, inspect=True)  # (B, T, C)
                caches.append(cache)
            else:
                x = block(x)  # (B, T, C)
        logits = self.lm_head(self.ln_f(x))  # (B, T, V)
        if not inspect:
            return logits
        names = [n for n in inspect_outputs(self.cfg.attention) if n not in ("logits", "pos_enc")]
        cache = {n: torch.stack([c[n][0] for c in caches]) for n in names}  # (L, H, ...)
        cache["pos_enc"] = pos_enc
        for layer, c in enumerate(caches):  # blocks.{l}.{hook}: (T, C) or (T, d_mlp)
            cache.update({f"blocks.{layer}.{k}": v[0] for k, v in c["hooks"].items()})
        return logits, cache

    def step(
        self,
        token: torch.Tensor,
        position: torch.Tensor,
        state: torch.Tensor,
        carried: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """One token through the recurrent form of a linear-attention or DeltaNet model.

        Args:
            token: int64 (1, 1); position: int64 (1,); state: (L, H, d_head, d_head);
                carried: linear attention's normalizer (L, H, d_head), or DeltaNet's
                convolution window (L, 3, 3, C). Start from zeros at position 0.

        Returns:
            ``(logits, state, carried)``: (1, V) and the updated state and carried tensor.

        Raises:
            RuntimeError: for a softmax model.
        """
        x = self.embed(token) + self.positional_encoding(position)  # (1, 1, C)
        states, carries = [], []
        for layer, block in enumerate(self.blocks):
            a, S, c = block.attn.step(
                block.ln_1(x), state[layer : layer + 1], carried[layer : layer + 1]
            )  # (1, 1, C), (1, H, D, D), (1, ...)
            mid = x + a  # (1, 1, C)
            x = mid + block.mlp(block.ln_2(block.mlp_input(x, mid)))  # (1, 1, C)
            states.append(S[0])
            carries.append(c[0])
        logits = self.lm_head(self.ln_f(x))[:, 0]  # (1, V)
        return logits, torch.stack(states), torch.stack(carries)
