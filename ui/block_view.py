"""The transformer block in numbers (#21 item 2): for the chosen layer and token, the
residual stream in and out, what attention and the MLP add, and the block diagram with
this model's shapes and the token's norm at every stage. Every number is the inspect
graph's own block output (``inference.block``); the lecture's block step draws this.

Click a token's bars to choose it (``ui.click``: the same query as the attention view's).
"""

from __future__ import annotations

import streamlit as st

from inference import view_specs as figs
from inference.analysis import Analysis, sentence_key
from inference.block import BlockNumbers, block_numbers, block_outputs, has_block_outputs
from ui import click, downloads, loaders, presenter, specs
from ui.figures import plot
from ui.notices import say
from ui.selection import Selection
from ui.text import plain


@st.cache_resource(max_entries=32, show_spinner=False)
def _shared_numbers(name: str, sentence, layer: int, _ids: tuple[int, ...]) -> BlockNumbers:
    """``sentence``: ``inference.analysis.sentence_key`` (the ids too when handed in)."""
    return block_numbers(block_outputs(loaders.get_model(name), list(_ids), layer))


def numbers(name: str, result: Analysis, layer: int) -> BlockNumbers:
    """Block ``layer``'s numbers on ``result``'s sentence: cached across sessions for a
    shipped or served model, computed for this session's upload.

    Raises:
        LookupError: if the model's graph has no block outputs.
    """
    if loaders.is_shared(name):
        return _shared_numbers(name, sentence_key(result), layer, tuple(result.ids))
    return block_numbers(block_outputs(loaders.get_model(name), result.ids, layer))


def contributions(facts, result, layer, token) -> dict:
    """``view_specs.block_contributions`` of block ``layer``; ``facts``: the model's
    ``inference.view_specs.ModelFacts`` (``ui.specs.get`` hands it)."""
    return figs.block_contributions(result, numbers(facts.name, result, layer), layer, token)


def token_sum(facts, result, layer, token) -> dict:
    """``view_specs.block_token_sum`` of block ``layer``."""
    return figs.block_token_sum(result, numbers(facts.name, result, layer), layer, token)


def flow(facts, result, layer, token) -> dict:
    """``view_specs.block_flow`` of block ``layer``."""
    return figs.block_flow(facts, result, numbers(facts.name, result, layer), layer, token)


CHART = "block_contributions"


def chosen_token(result: Analysis) -> int:
    """The token picked for this sentence (a clicked cell or bar, the attention view's
    query), else the last one."""
    t = click.chosen(tuple(result.tokens))
    return t if t is not None and 0 <= t < result.T else result.T - 1


def draw(sel: Selection, flow_too: bool = True) -> BlockNumbers | None:
    """The block view of ``sel``'s layer and the numbers it drew; None (and a one-line
    note) when the model's graph has no block outputs."""
    model, result, layer = sel.model, sel.result, sel.layer
    if not has_block_outputs(model):
        say("info", f"{sel.name}: its graph has no block outputs (blocks.{{l}}.resid_pre, ...).")
        return None
    t = chosen_token(result)
    picked = click.on_click(CHART, tuple(result.tokens))
    plot(specs.shown(contributions, sel.name, result, layer, t), key=CHART, on_select=picked)
    nums = numbers(sel.name, result, layer)
    share = nums.added_share(t)
    st.markdown(f"**Token {t} “{plain(result.display_tokens[t])}”: its residual stream out**")
    cols = st.columns(3)  # big enough to read from the back row (st.caption is not)
    cols[0].metric("was already in the stream", f"{share['resid_pre']:.0%}")
    cols[1].metric("attention wrote", f"{share['attn.out']:.0%}")
    cols[2].metric("the MLP wrote", f"{share['mlp.out']:.0%}")
    with presenter.notes():
        st.caption(
            "Click a token's bars to pick another. Shares are projections on the residual "
            f"out's direction. Measured from the graph: max |out − (in + attention + MLP)| "
            f"= {nums.residual_gap:.1e}."
        )
    plot(specs.shown(token_sum, sel.name, result, layer, t), key="block_token_sum")
    if flow_too:
        plot(specs.shown(flow, sel.name, result, layer, t), key="block_flow")
    return nums


def block_numbers_view(sel: Selection) -> None:
    """The block view: the selected layer's transformer block in numbers from the graph (#21
    item 2): what attention and the MLP add to every token's residual stream, one
    token's in + attention + MLP = out, and the block diagram with this model's shapes."""
    with presenter.notes():
        st.caption(
            "A pre-LN block: x + attention(LayerNorm(x)), then + MLP(LayerNorm(·)). The "
            "residual stream keeps its shape (B, T, d_model); attention and the MLP only add "
            "to it. Every number is the exported graph's own block output for this sentence."
        )
    if nums := draw(sel):
        result, layer = sel.result, sel.layer
        axes = {h: ("token", "d_mlp" if h == "mlp.hidden" else "d_model") for h in nums.tensors}
        about = downloads.about(sel.name, result, layer, sel.head, "block", axes=axes,
                                token=chosen_token(result))  # fmt: skip
        downloads.arrays("block", nums.tensors, result.display_tokens, layer, sel.head, about)
