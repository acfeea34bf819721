"""One function per view of the app, returning the app's own figure: the builders the app
draws with (``inference.view_specs``, ``viz/``) on the same arrays, as a
``plotly.graph_objects.Figure`` (or an ``altair.Chart`` for the positional encoding).
``fig.show()`` draws it in a notebook with no network (``attnviz.offline``);
``fig.data[0].z`` is the heatmap's array. Layers, heads, tokens and positions count from 0.
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd
import plotly.graph_objects as go

from attnviz import interventions
from attnviz.model import Model, Sentence
from inference import view_specs as specs
from inference.block import block_numbers, block_outputs
from inference.text_input import visible
from models.tokenizer import encode
from viz import lab as lab_figs
from viz import positional as vp

MODES = ("selected head", "mean over heads", "max over heads")  # the attention view's


def _figure(spec: dict) -> go.Figure:
    return go.Figure(spec)


def attention(
    s: Sentence, layer: int = 0, head: int = 0, query: int | None = None, mode=MODES[0]
) -> go.Figure:
    """Attention heads: one head's weights (T, T) as a heatmap (query rows, key
    columns), or the mean or max over the layer's heads (``mode``), with query
    ``query``'s row (default: the last token) as bars under it; ▶ steps through queries."""
    query = s.T - 1 if query is None else query
    return _figure(specs.attention(s.model, s.analysis, layer, head, mode, query))


def head_grid(s: Sentence) -> go.Figure:
    """Every layer x head of the sentence as small multiples (above 128 tokens an
    overview: each head max-pooled over blocks of tokens)."""
    return _figure(specs.head_grid(s.model, s.analysis))


def compare(a: Sentence, b: Sentence, layer: int = 0, head: int = 0) -> tuple:
    """Compare models: head (layer, head) of each sentence's model, two heatmaps."""
    return tuple(_figure(specs.compare(s.model, s.analysis, layer, head)) for s in (a, b))


def shapes(s: Sentence, layer: int = 0) -> go.Figure:
    """Q/K/V shapes: the multi-head reshape of ``layer`` with this model's sizes."""
    return _figure(specs.shape_flow(s.model, s.analysis, layer))


def qkv(s: Sentence, layer: int = 0, head: int = 0, which: str = "q") -> go.Figure:
    """One head's ``q``, ``k``, ``v`` or ``head_out`` (T, d_head) as a heatmap."""
    return _figure(specs.qkv(s.model, s.analysis, layer, head, which))


def positional(model: Model, chart: str = "curves", dims: Sequence[int] | None = None,
               length: int | None = None) -> alt.Chart:  # fmt: skip
    """Positional encoding (P, C): ``"curves"`` (value against position, one line per
    dimension in ``dims``; ``length`` marks a sentence's end), ``"heatmap"`` (all of it)
    or ``"similarity"`` (the dot product of every two positions' encodings)."""
    pe = model.pos_enc  # (P, C)
    if chart == "heatmap":
        return vp.pe_heatmap(pe)
    if chart == "similarity":
        return vp.pe_similarity(pe)
    dims = vp.default_dims(pe.shape[1]) if dims is None else list(dims)
    sinusoidal = model.config.position_scheme == "sinusoidal"
    return vp.pe_curves(pe, dims, sinusoidal, sentence_length=length)


def mask(s: Sentence, layer: int = 0, head: int = 0) -> go.Figure:
    """Causal mask: one head's scores, the mask and the weights (a foreign graph's: what
    its Softmax receives)."""
    if "masked_scores" in s.analysis.outputs:
        return _figure(specs.softmax_input_panels(s.model, s.analysis, layer, head))
    return _figure(specs.mask_panels(s.model, s.analysis, layer, head))


def recurrence(s: Sentence, layer: int = 0, head: int = 0) -> go.Figure:
    """A linear model's state S_i (d_head, d_head) and normalizer z_i after every token,
    as frames (▶ steps through them).

    Raises:
        ValueError: a model without a recurrent form (softmax attention).
    """
    if s.analysis.recurrent is None or "normalizer" not in s.analysis.recurrent:
        raise ValueError(f"{s.model.name} has no linear recurrent form (state, normalizer)")
    return _figure(specs.recurrent_play(s.model, s.analysis, layer, head))


def block(s: Sentence, layer: int = 0, token: int | None = None) -> go.Figure:
    """Transformer block: what attention and the MLP add to each token's residual stream
    in block ``layer`` (L2 norms), token ``token`` (default: the last) shaded.

    Raises:
        LookupError: a graph without block outputs.
    """
    token = s.T - 1 if token is None else token
    nums = block_numbers(block_outputs(s.model.runnable, s.ids, layer))
    return _figure(specs.block_contributions(s.analysis, nums, layer, token))


def predictions(s: Sentence, position: int | None = None) -> go.Figure:
    """Predictions: the 8 most likely next tokens after ``position`` (default T - 2, where
    the app opens: the next token is in the sentence), probabilities."""
    position = max(0, s.T - 2) if position is None else position
    return _figure(specs.top_k(s.model, s.analysis, position))


def next_tokens(s: Sentence, k: int = 5) -> pd.DataFrame:
    """The ``k`` most likely next tokens and their probabilities at every position
    (T rows), the Predictions view's table."""
    return specs.top_next(s.model, s.analysis, k).to_pandas()


def stats(s: Sentence) -> pd.DataFrame | None:
    """Head statistics: per head (L·H rows) entropy, previous-token and first-token
    share, ... on this sentence, with the induction score; None for one token."""
    table = specs.head_stats(s.model, s.analysis)
    return None if table is None else table.to_pandas()


def ablation(s: Sentence, heads: Sequence[tuple[int, int]], mode: str = "zero") -> go.Figure:
    """Ablation: the next-token loss (nats) at each position as trained and with
    ``heads`` ablated (``attnviz.ablate`` has the numbers)."""
    ab = interventions.ablate(s, heads, mode)
    tokens = [visible(t) for t in s.analysis.tokens]
    return _figure(lab_figs.loss_lines(ab.losses, tokens, ("as trained", f"{mode}-ablated")))


def importance(s: Sentence, mode: str = "zero") -> go.Figure:
    """Head importance: the loss increase (nats) when each head alone is ablated (L, H)."""
    grid = interventions.importance(s, mode)
    title = "On your sentence: loss increase when each head alone is ablated"
    return _figure(lab_figs.head_grid(grid, title, "Δ loss (nats)"))


def lens(s: Sentence) -> go.Figure:
    """Logit lens: the top next token at each depth (rows) and position, coloured by the
    probability of the token that comes next."""
    out, vocab = interventions.lens(s), s.model.vocab
    top = [[vocab[int(i)] for i in row] for row in out["lens_top"]]  # (K, T) strings
    L = s.model.config.n_layer
    rows = ["embedding"] + [f"after block {i}" for i in range(L)]
    tokens = [visible(t) for t in s.analysis.tokens]
    return _figure(lab_figs.position_grid(out["lens_target_prob"], tokens, "Logit lens",
                                          "p(next)", text=top, rows=rows))  # fmt: skip


def attribution(s: Sentence, position: int | None = None) -> go.Figure:
    """Direct logit attribution at ``position`` (default T - 2): each head's share (L, H)
    of the logit of the top prediction there."""
    position = max(0, s.T - 2) if position is None else position
    out = interventions.lens(s)
    target = s.model.vocab[int(out["target"][position])]
    values = out["dla_heads"][:, :, position]  # (L, H)
    return _figure(lab_figs.head_grid(values, f"Direct contribution to logit({target})", "logit"))


def patching(model: Model, clean: str, corrupted: str, answer, wrong,
             direction: str = "denoise") -> tuple[go.Figure, go.Figure]:  # fmt: skip
    """Activation patching: the head grid (L, H) and the residual grid (L+1, T), each cell
    the patched run's metric on the 0 = corrupted, 1 = clean scale (``attnviz.patch``)."""
    heads, resid = interventions.patch(model, clean, corrupted, answer, wrong, direction)
    largest = heads.largest()
    base = corrupted if direction == "denoise" else clean
    tokens = [visible(t) for t in encode(model.tokenizer, base).tokens]
    rows = [f"into block {i}" for i in range(model.config.n_layer)] + ["after the last"]
    unit = "0 corrupted · 1 clean"
    return (
        _figure(lab_figs.head_grid(heads.grid, f"Each head's output patched ({direction})",
                                   unit, [largest])),
        _figure(lab_figs.position_grid(resid.grid, tokens, "Each residual cell patched "
                                       "(layer × position)", unit, signed=True, rows=rows)),
    )  # fmt: skip


def array_of(fig: go.Figure, trace: int = 0) -> np.ndarray:
    """A figure's heatmap values (``z``) as a float array: what it draws, to check."""
    return np.asarray(fig.data[trace].z, dtype=float)
