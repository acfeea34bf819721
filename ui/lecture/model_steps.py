"""Lecture steps on the trained decoder-only models: attention cues, scoring, multi-head
attention, self-attention and positional encoding, the transformer block and an
induction head. Every figure is the visualizer's or a lesson's own (``ui.specs``,
``ui.lessons``), on the sidebar's sentence."""

from __future__ import annotations

import numpy as np
import streamlit as st

from inference import view_specs as figs
from lessons.architectures import layer_costs
from ui import block_view, loaders, presenter, specs
from ui.figures import Encoded, plot, vega_lite
from ui.lecture.step import Deeper, state
from ui.lessons.scoring import scores_figure
from ui.selection import Selection
from ui.sidebar import EXAMPLES

COPYING = EXAMPLES["Copying (induction)"]


def _heatmap(name: str, result, layer: int, head: int) -> Encoded | dict:
    """One head's weights with the last token's row under them; the heatmap alone when
    presenting (it then fits the projector's screen)."""
    if presenter.is_on():
        return specs.shown(figs.compare, name, result, layer, head)
    q = result.T - 1
    return specs.shown(figs.attention, name, result, layer, head, "selected head", q)


def cues(sel: Selection) -> Deeper:
    """One head's weights with the last token's row: the query pooling the values."""
    plot(_heatmap(sel.name, sel.result, sel.layer, sel.head), key="lecture_cues")
    return Deeper("visualizer", "Attention heads in the visualizer", state(sel, view="attention"))


def scoring(sel: Selection) -> Deeper:
    """Additive beside scaled dot-product scores of the selected head (the lesson's)."""
    plot(scores_figure(sel), key="lecture_scores")
    return Deeper("scoring", "The scoring-functions lesson", state(sel))


def multi_head(sel: Selection) -> Deeper:
    """The multi-head reshape with this model's sizes."""
    columns = presenter.flow_columns()
    flow = specs.shown(figs.shape_flow, sel.name, sel.result, sel.layer, columns)
    plot(flow, key="lecture_shapes")
    return Deeper("visualizer", "Q/K/V shapes in the visualizer", state(sel, view="shapes"))


def self_attention(sel: Selection) -> Deeper:
    """The CNN / RNN / self-attention table at this sentence's n and the model's d, and
    the model's positional encoding."""
    n, d = sel.result.T, sel.model.config.d_model
    rows = layer_costs(n, d, k=3)
    st.markdown(f"**At this sentence's n = {n} tokens and the model's d = {d}:**")
    presenter.table(rows)
    vega_lite(specs.get(figs.pe_heatmap, sel.name, sel.result))
    return Deeper(
        "visualizer", "Positional encoding in the visualizer", state(sel, view="positional")
    )


def block(sel: Selection) -> Deeper:
    """The selected layer's block in numbers from the graph: what attention and the MLP
    add to each token, one token's in + attention + MLP = out, and the block diagram with
    this model's shapes and that token's norms (``ui.block_view``)."""
    block_view.draw(sel)
    return Deeper("visualizer", "The transformer block in the visualizer", state(sel, view="block"))


def induction(sel: Selection) -> Deeper:
    """The model's best induction head on a repeated sentence, the last token's row."""
    scores = loaders.get_induction(sel.name)  # (L, H)
    layer, head = (int(i) for i in np.unravel_index(np.argmax(scores), scores.shape))
    result = loaders.get_analysis(sel.name, COPYING)
    plot(_heatmap(sel.name, result, layer, head), key="lecture_induction")
    st.caption(
        f"Layer {layer}, head {head} of the {sel.name} model: induction score "
        f"{scores[layer, head]:.2f} on a random word sequence repeated twice (the highest "
        "of its heads). In the second copy each token looks at the token that followed "
        "its earlier occurrence: that is what it predicts next."
    )
    params = state(sel, view="attention", text=COPYING, layer=layer, head=head)
    return Deeper("visualizer", "This head in the visualizer", params)
