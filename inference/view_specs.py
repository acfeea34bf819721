"""The figures and tables of the visualizer's views, built from one model's analysis of
one sentence: arrays in, a plain spec (plotly or Vega-Lite) or an Arrow table out.

The app calls them through ``ui/specs.py``, which caches them across sessions; the
bench times them through the app itself (``bench/rerun.py``). What a builder needs of the
model besides the analysis comes in a :class:`ModelFacts` (the app's reads its cached
loaders lazily), so a builder can be called, and tested, on arrays alone.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import pyarrow as pa

from inference.analysis import Analysis, head_scores, head_table
from inference.block import BlockNumbers
from inference.predictions import top_next_columns
from inference.text_input import visible
from models import contract
from models.config import ModelConfig
from viz import attention as va
from viz import block as vb
from viz import fit, style
from viz import grid as vg
from viz import mask as vm
from viz import play as vplay
from viz import positional as vp
from viz import shape_flow as vflow
from viz import shapes as vs
from viz import spec as vspec
from viz import tensors as vt


class ModelFacts(Protocol):
    """What the builders read of a model besides its analysis.

    Attributes:
        name: the model's key (``softmax``, a served model's name, ``upload``).
        config: its :class:`models.config.ModelConfig`.
        vocab: the token string of every id (V,).
        pos_enc: its positional encoding (P, C).
        induction: the induction probe's score per head (L, H), or None.
    """

    name: str
    config: ModelConfig
    vocab: list[str]
    pos_enc: np.ndarray
    induction: np.ndarray | None


def _weights(result: Analysis, layer: int, head: int | None, mode: str) -> tuple:
    """(T, T) weights and title of the attention view's big heatmap (``head`` is
    None for the mean and the max over heads)."""
    attn = result.outputs["attn"]  # (L, H, T, T)
    if mode == "selected head":
        return attn[layer, head], f"Layer {layer}, head {head}"
    reduce = attn[layer].mean if mode == "mean over heads" else attn[layer].max
    return reduce(0), f"Layer {layer}, {mode.split()[0]} over {attn.shape[1]} heads"


def shared_key(config, head: int | None) -> str:
    """Grouped-query attention (H_kv < H): which query heads share ``head``'s key and
    value head, e.g. " · key/value head 1, shared by heads 2–3"; "" otherwise."""
    group = config.n_head // config.kv_heads
    if head is None or group == 1:
        return ""
    kv = head // group
    return f" · key/value head {kv}, shared by heads {kv * group}–{kv * group + group - 1}"


def head_weights(result: Analysis, layer: int, head: int | None, mode: str) -> np.ndarray:
    """The (T, T) weights :func:`attention` draws."""
    return _weights(result, layer, head, mode)[0]


def attention(facts: ModelFacts, result: Analysis, layer, head, mode, query) -> dict:
    """The attention view's heatmap (one head, or the mean or max over heads) with
    query ``query``'s row as bars underneath; one head's figure also carries the other
    heads of its layer (``viz.attention.with_heads``), up to ``INSTANT_HEADS_MAX`` heads
    and ``INSTANT_HEADS_MAX_T`` tokens."""
    weights, title = _weights(result, layer, head, mode)
    title += shared_key(facts.config, head if mode == "selected head" else None)
    fig = va.attention_with_row(weights, result.display_tokens, query, title=title)
    n_head = result.outputs["attn"].shape[1]
    if (
        mode != "selected head"
        or n_head > va.INSTANT_HEADS_MAX
        or result.T > va.INSTANT_HEADS_MAX_T
    ):
        return fig
    others = {}
    for h in set(range(n_head)) - {head}:
        w, title = _weights(result, layer, h, mode)
        title += shared_key(facts.config, h)
        others[h] = va.attention_with_row(w, result.display_tokens, query, title, frames=False)
    return va.with_heads(fig, others)


def head_grid(facts: ModelFacts, result: Analysis) -> dict:
    """Every layer and head of the sentence as small multiples."""
    kv = facts.config.kv_heads if facts.config.kv_heads < facts.config.n_head else None
    return vg.head_grid(result.outputs["attn"], result.display_tokens, kv_heads=kv)


def compare(facts: ModelFacts, result: Analysis, layer, head) -> dict:
    """One head of model ``name`` for the side-by-side comparison."""
    w = result.outputs["attn"][layer, head]  # (T, T)
    width = fit.HALF_1280_PX if side_by_side(result.T) else fit.FULL_1280_PX
    title = f"{facts.name}: L{layer} H{head}" + shared_key(facts.config, head)
    return va.attention_heatmap(w, result.display_tokens, title=title, width_px=width)


def no_difference(a: Analysis, b: Analysis) -> str | None:
    """Why two models' analyses of one sentence have no head-by-head difference (one
    line), or None when they have: the same layer and head counts and the same token ids."""
    (la, ha), (lb, hb) = a.outputs["attn"].shape[:2], b.outputs["attn"].shape[:2]
    if (la, ha) != (lb, hb):
        return (
            f"No difference drawn: A has {la} layers × {ha} heads, B {lb} × {hb}; a "
            "difference needs the same layers and heads."
        )
    if list(a.ids) != list(b.ids):
        return (
            f"No difference drawn: the two tokenizers split the sentence differently "
            f"(A: {a.T} tokens, B: {b.T}); a difference needs the same tokens."
        )
    return None


def difference(a: Analysis, b: Analysis, layer: int, head: int, title: str) -> dict:
    """B − A of one head's attention weights (T, T), on a diverging scale symmetric at 0,
    across the page; ``a`` and ``b`` analyse the same token ids (:func:`no_difference`)."""
    diff = b.outputs["attn"][layer, head] - a.outputs["attn"][layer, head]  # (T, T)
    lo, hi = style.symmetric_range(diff)
    return va.attention_heatmap(
        diff, a.display_tokens, title=title, zmin=lo, zmax=hi, colorscale=style.DIVERGING,
        colorbar_title="B − A", width_px=fit.FULL_1280_PX,
    )  # fmt: skip


def side_by_side(t: int) -> bool:
    """Whether two heatmaps of t tokens go side by side (else one above the other):
    then each still labels every token at a 1280 px window."""
    return t <= fit.SIDE_BY_SIDE_MAX


def shape_flow(facts: ModelFacts, result: Analysis, layer, columns=1) -> dict:
    """The multi-head reshape of ``layer`` as a flow of boxes with this model's sizes
    (in ``columns`` columns: 2 on a projector)."""
    cfg = facts.config
    stages = vs.reshape_stages(
        1, result.T, cfg.d_model, cfg.n_head, cfg.d_head, attention=cfg.attention, eps=cfg.attn_eps,
        layer=layer, kv_heads=cfg.kv_heads, rotary=cfg.position_scheme == "rotary",
        norm="RMSNorm" if cfg.norm == "rmsnorm" else "LayerNorm",
    )  # fmt: skip
    title = (
        f"Multi-head reshape of layer {layer}: B=1, T={result.T}, d_model={cfg.d_model}, "
        f"H={cfg.n_head}, d_head={cfg.d_head}"
        + (f", H_kv={cfg.kv_heads}" if cfg.kv_heads < cfg.n_head else "")
    )
    return vflow.shape_flow_figure(stages, title=title, columns=columns)


def qkv(facts: ModelFacts, result: Analysis, layer, head, which) -> dict:
    """``q``, ``k``, ``v`` or ``head_out`` (T, d_head) of one head."""
    matrix = result.outputs[which][layer, head]  # (T, d_head)
    title = f"{which} of layer {layer}, head {head}: shape {matrix.shape}"
    return vt.matrix_heatmap(
        matrix, result.display_tokens, None, title, "d_head dimension", "token"
    )


def mask_panels(facts: ModelFacts, result: Analysis, layer, head) -> dict:
    """Scores, causal mask and weights of one head."""
    out, cfg = result.outputs, facts.config
    return vm.causal_mask_panels(
        head_scores(result, layer, head),  # (T, T)
        out["attn"][layer, head],
        result.display_tokens,
        cfg.attention,
        cfg.attn_eps,
        cfg.window_of(layer),
    )


def softmax_input_panels(facts: ModelFacts, result: Analysis, layer, head) -> dict:
    """What one head's Softmax receives (mask included), the mask as measured and the
    weights: a foreign ONNX graph's mask view."""
    out = result.outputs
    return vm.softmax_input_panels(
        out["masked_scores"][layer, head], out["attn"][layer, head], result.display_tokens
    )


def recurrent_state(facts: ModelFacts, result: Analysis, layer, head, i) -> dict:
    """The state S_i (d_head, d_head) of one head of a linear model after token i."""
    S = result.recurrent["state"][layer, head, i]  # (d_head, d_head)
    return vt.matrix_heatmap(S, None, None, f"State S_{i}", "value dim", "key feature dim")


def recurrent_vector(facts: ModelFacts, result: Analysis, layer, head, i, which) -> dict:
    """The normalizer z_i or the output y_i (d_head,) after token i."""
    title = {"normalizer": f"Normalizer z_{i}", "y": f"Output y_{i}"}[which]
    return vt.vector_bar(result.recurrent[which][layer, head, i], title=title)  # (d_head,)


def recurrent_play(facts: ModelFacts, result: Analysis, layer, head) -> dict:
    """The state S_i and normalizer z_i of one head for every token i, as plotly frames
    (``viz.play.state_steps``; ▶ play steps through them in the browser)."""
    rec = result.recurrent
    states = rec["state"][layer, head]  # (T, d_head, d_head)
    normalizers = rec["normalizer"][layer, head]  # (T, d_head)
    return vplay.state_steps(states, normalizers, result.display_tokens)


def top_k(facts: ModelFacts, result: Analysis, pos) -> dict:
    """The 8 most likely next tokens after position ``pos``."""
    vocab = facts.vocab
    title = f"Next token after “{style.escape(visible(result.tokens[pos]))}”"
    return vt.topk_bars(result.probs[pos], vocab[: result.probs.shape[1]], k=8, title=title)


def pe_curves(facts: ModelFacts, result: Analysis | None, dims, length) -> dict:
    """Encoding curves of dimensions ``dims``, the sentence's end marked (Vega-Lite)."""
    pe = facts.pos_enc  # (P, C)
    sinusoidal = facts.config.position_scheme == "sinusoidal"
    return vspec.vega_lite(vp.pe_curves(pe, list(dims), sinusoidal, sentence_length=length))


def pe_heatmap(facts: ModelFacts, result: Analysis | None) -> dict:
    """The whole positional encoding (P, C) (Vega-Lite)."""
    return vspec.vega_lite(vp.pe_heatmap(facts.pos_enc))


def pe_similarity(facts: ModelFacts, result: Analysis | None) -> dict:
    """Dot products of every two positions' encodings (Vega-Lite)."""
    return vspec.vega_lite(vp.pe_similarity(facts.pos_enc))


def top_next(facts: ModelFacts, result: Analysis, k) -> pa.Table:
    """The ``k`` most likely next tokens and their probabilities at every position
    (T rows: position, token, #1 next, p #1, ...)."""
    table = {"position": list(range(result.T)), "token": [visible(t) for t in result.tokens]}
    return pa.table({**table, **top_next_columns(result.probs, facts.vocab, k)})


def head_stats(facts: ModelFacts, result: Analysis) -> pa.Table | None:
    """Per-head statistics of the sentence and the induction scores, rounded to 3
    decimals (L*H rows); None for a one-token sentence."""
    signed = facts.config.attention == "delta"  # implied weights: signed
    table = head_table(result, facts.induction, signed=signed)
    return None if table is None else pa.Table.from_pandas(table.round(3), preserve_index=False)


def block_contributions(result: Analysis, nums: BlockNumbers, layer: int, token: int) -> dict:
    """What attention and the MLP add to each token of block ``layer`` (``token``
    shaded), from the block's numbers ``nums`` (``inference.block.block_numbers``)."""
    return vb.contributions_figure(nums.norms, result.display_tokens, token, layer)


def block_token_sum(result: Analysis, nums: BlockNumbers, layer: int, token: int) -> dict:
    """Token ``token``'s residual in + attention + MLP = residual out, by dimension."""
    return vb.token_sum_figure(nums.token(token), result.display_tokens[token], layer)


def block_flow(
    facts: ModelFacts, result: Analysis, nums: BlockNumbers, layer: int, token: int
) -> dict:
    """The block diagram with this model's shapes and token ``token``'s norms."""
    cfg = facts.config
    norms = tuple(float(nums.norms[h][token]) for h in contract.BLOCK_HOOKS)
    stages = vb.block_stages(1, result.T, cfg.d_model, cfg.d_mlp, cfg.n_head, cfg.attention,
                             norms, cfg.norm, cfg.activation, cfg.gated_mlp,
                             cfg.parallel_residual)  # fmt: skip
    title = (
        f"Block {layer} of {cfg.n_layer} ({cfg.attention}): d_model = {cfg.d_model}, "
        f"d_mlp = {cfg.d_mlp}, H = {cfg.n_head}"
    )
    return vflow.shape_flow_figure(stages, title=title)


# Figures of one sentence (or of the model only: ``MODEL_ONLY``) are few and can be
# large (the head grid is L*H heatmaps); per-head figures are many and small.
PER_SENTENCE = {head_grid, shape_flow, top_next, head_stats}
MODEL_ONLY = {pe_curves, pe_heatmap, pe_similarity}
