"""The lab forward: a transformer run with a hand on every head and every residual cell.

Interventions live in the graph this project exports (``<kind>.lab.onnx``, see
``models/contract.py``): transformers v5 has no ``head_mask``, and a foreign graph has no
such inputs. One forward takes a batch of B runs of the same kind of model, each with its
own overrides, so an importance grid (L·H ablations) or a patching grid is one call:

* ``head_mask`` (B, L, H, T) and ``head_values`` (B, L, H, T, d_head): where the mask is 1
  the head's output at that position (``head_out``, attn @ v before W_O) is replaced by
  the value (zero-ablation: 0; mean-ablation: the head's mean output; activation patching:
  another run's ``head_out``). Where the mask is 0 the value is ignored.
* ``resid_mask`` (B, L+1, T) and ``resid_values`` (B, L+1, T, C): the same for the
  residual stream at the L+1 boundaries: index l < L is block l's input (``resid_pre``),
  index L the stream after the last block, what the final LayerNorm reads.

With every mask at zero it computes exactly the inspect graph's logits, head outputs and
residual stream. Names follow TransformerLens (``hook_z``, ``hook_resid_pre``); the
techniques: ablation and activation patching (Meng et al. 2022, Wang et al. 2022),
the logit lens (nostalgebraist 2020) and direct logit attribution with the final
LayerNorm's scale frozen (Elhage et al. 2021, TransformerLens' ``decompose_resid``).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from models.contract import LAB_OUTPUTS
from models.heads import merge_heads
from models.norms import centred, norm_scale
from models.transformer import Transformer


def head_outputs(block, x: torch.Tensor) -> torch.Tensor:
    """One block's per-head attention outputs on its residual input x (B, T, C) ->
    (B, H, T, d_head): attn @ v before the heads merge and W_O. Softmax and linear use
    their parallel forms (the inspect graph's); DeltaNet its exported scan."""
    attn, h = block.attn, block.ln_1(x)  # (B, T, C)
    q, k, v = attn.qkv(h)  # (B, H, T, d_head) each
    gates = {"beta": attn.beta(h)} if attn.short_conv else {}  # (B, H, T)
    y, _ = attn.mixing.mix(q, k, v, inspect=False, training=True, **gates)  # (B, H, T, d_head)
    return y


def replace(x: torch.Tensor, mask: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """x where mask is 0, values where it is 1: x, values (B, ..., T, n), mask (B, ..., T)."""
    m = mask.unsqueeze(-1)  # (B, ..., T, 1)
    return x * (1 - m) + values * m  # (B, ..., T, n)


def lab_forward(model: Transformer, input_ids, head_mask, head_values, resid_mask, resid_values):
    """The model on ``input_ids`` (B, T) with the overrides of the module docstring.

    Returns:
        ``logits`` (B, T, V), ``head_out`` (B, L, H, T, d_head) (after the overrides),
        ``resid`` (B, L+1, T, C) (after the overrides), and for run 0 the lens and
        attribution of :func:`lens_and_attribution`, in ``contract.LAB_OUTPUTS`` order.
    """
    T = input_ids.shape[1]
    x = model.embed(input_ids) + model.positional_encoding(torch.arange(T))  # (B, T, C)
    embed = x[0]  # (T, C): run 0's embedding, the attribution's first component
    heads, resids, mlps = [], [], []
    for layer, block in enumerate(model.blocks):
        x = replace(x, resid_mask[:, layer], resid_values[:, layer])  # (B, T, C)
        resids.append(x)
        y = head_outputs(block, x)  # (B, H, T, d_head)
        y = replace(y, head_mask[:, layer], head_values[:, layer])  # (B, H, T, d_head)
        heads.append(y)
        mid = x + block.attn.o_proj(merge_heads(y))  # (B, T, C)
        m = block.mlp(block.ln_2(block.mlp_input(x, mid)))  # (B, T, C)
        x = mid
        mlps.append(m[0])
        x = x + m  # (B, T, C)
    x = replace(x, resid_mask[:, -1], resid_values[:, -1])  # (B, T, C)
    resids.append(x)
    logits = model.lm_head(model.ln_f(x))  # (B, T, V)
    head_out = torch.stack(heads, 1)  # (B, L, H, T, d_head)
    resid = torch.stack(resids, 1)  # (B, L+1, T, C)
    lens = lens_and_attribution(model, input_ids[0], logits[0], resid[0], head_out[0], embed,
                                torch.stack(mlps))  # fmt: skip
    return (logits, head_out, resid, *lens)


def lens_and_attribution(model: Transformer, ids, logits, resid, head_out, embed, mlp_out):
    """The logit lens and direct logit attribution of one run.

    Args:
        ids: (T,) its tokens; logits: (T, V); resid: (L+1, T, C); head_out (L, H, T, D);
            embed: (T, C) token embedding + positional encoding; mlp_out: (L, T, C).

    Returns:
        ``lens_top`` int64 (L+1, T): the top token of the residual at each boundary read
        through the final LayerNorm and the unembedding; ``lens_top_prob`` (L+1, T) its
        probability; ``lens_target_prob`` (L+1, T) the probability there of the token
        that comes next in the sentence (at the last position, of the model's own top
        prediction). ``target`` int64 (T,): the model's top prediction at each position,
        the token the attribution explains. ``dla_heads`` (L, H, T), ``dla_mlp`` (L, T),
        ``dla_embed`` (T,), ``dla_bias`` (T,): each component's direct contribution to the
        target's logit, the final LayerNorm's scale frozen at this run's (Elhage et al.
        2021): they sum to ``logits[t, target[t]]``. ``dla_bias`` is every attention
        output bias plus the final LayerNorm's bias.
    """
    ln = model.ln_f
    lens_probs = F.softmax(model.lm_head(ln(resid)), dim=-1)  # (L+1, T, V)
    top_prob, top = lens_probs.max(dim=-1)  # (L+1, T) each
    target = logits.argmax(dim=-1)  # (T,)
    following = torch.cat([ids[1:], target[-1:]])  # (T,) the next token; last: the top one
    gather = following.view(1, -1, 1).expand(lens_probs.shape[0], -1, 1)  # (L+1, T, 1)
    target_prob = lens_probs.gather(-1, gather)[..., 0]  # (L+1, T)

    final = resid[-1]  # (T, C)
    scale = norm_scale(ln, final)  # (T,) frozen
    w_ln = ln.weight if ln.weight is not None else torch.ones_like(final[0])  # (C,)
    direction = model.lm_head.weight[target] * w_ln  # (T, C) W_U[target] * gamma

    def attribute(c: torch.Tensor) -> torch.Tensor:  # (..., T, C) -> (..., T)
        return (centred(ln, c) * direction).sum(-1) / scale  # (..., T)

    H, D = model.cfg.n_head, model.cfg.d_head
    o_weights = torch.stack([b.attn.o_proj.weight for b in model.blocks])  # (L, C, C)
    w_o = o_weights.view(o_weights.shape[0], -1, H, D).permute(0, 2, 1, 3)  # (L, H, C, D)
    per_head = head_out @ w_o.transpose(-2, -1)  # (L, H, T, C)
    bias = torch.zeros_like(final)  # (T, C)
    for block in model.blocks:
        if block.attn.o_proj.bias is not None:
            bias = bias + block.attn.o_proj.bias  # (T, C)
    dla_bias = attribute(bias)  # (T,)
    if ln.bias is not None:
        dla_bias = dla_bias + (model.lm_head.weight[target] * ln.bias).sum(-1)  # (T,)
    dla = (attribute(per_head), attribute(mlp_out), attribute(embed), dla_bias)
    return (top, top_prob, target_prob, target, *dla)


class LabGraph(nn.Module):
    """The exported lab graph: ``contract.LAB_INPUTS`` -> ``contract.LAB_OUTPUTS``."""

    def __init__(self, model: Transformer):
        super().__init__()
        self.model = model
        self.names = LAB_OUTPUTS

    def forward(self, input_ids, head_mask, head_values, resid_mask, resid_values):
        """See :func:`lab_forward`."""
        return lab_forward(self.model, input_ids, head_mask, head_values, resid_mask,
                           resid_values)  # fmt: skip


def example_inputs(model: Transformer, B: int = 2, T: int = 8) -> tuple[torch.Tensor, ...]:
    """Inputs of the lab graph with no override: ids (B, T) and zero masks and values."""
    cfg = model.cfg
    L, H, D, C = cfg.n_layer, cfg.n_head, cfg.d_head, cfg.d_model
    ids = torch.randint(0, cfg.vocab_size, (B, T))  # (B, T)
    return (ids, torch.zeros(B, L, H, T), torch.zeros(B, L, H, T, D),
            torch.zeros(B, L + 1, T), torch.zeros(B, L + 1, T, C))  # fmt: skip
