"""The seven views of the visualizer page. A view's options function draws its own
controls (query token, mode, ...) and returns their values; its renderer takes the
``Selection`` with those options and lays out figures built by ``viz/`` from the
real model's arrays.

A rerun draws the view on screen only, and its figures come from ``ui.specs``
(cached across sessions for the shipped models).
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from inference.text_input import visible
from ui import block_view, click, downloads, loaders, presenter, specs, walkthrough
from ui.compare import compare_options, compare_view
from ui.figures import plot, vega_lite
from ui.lacking import lacks
from ui.recurrence import mask_view, predict_options, predict_view
from ui.selection import Selection
from viz import positional as vp
from viz.views import default_dims


def no_options(sel: Selection) -> dict:
    """The options of a view without controls of its own."""
    return {}


def attention_options(sel: Selection) -> dict:
    """Selected head or the mean or max over heads, and the query of the row chart."""
    result = sel.result
    c1, c2 = st.columns([3, 2])
    mode = c1.radio(
        "Show",
        ["selected head", "mean over heads", "max over heads"],
        horizontal=True,
        key="attn_mode",
    )
    tokens = tuple(result.tokens)
    # A new sentence starts at its last token. The choice is kept under QUERY too and put
    # back into the control before it is drawn: the root page and /visualizer draw this
    # view as two pages, and a control new to a page would start at 0.
    if st.session_state.get("query_token_of") != tokens or click.QUERY not in st.session_state:
        st.session_state["query_token_of"] = tokens
        st.session_state[click.QUERY] = result.T - 1
    st.session_state["query_token"] = st.session_state[click.QUERY]
    query = c2.selectbox(
        "Query token",
        range(result.T),
        format_func=lambda i: f"{i}: {visible(result.tokens[i])}",
        key="query_token",
        on_change=click.keep_query,
    )
    click.remember(tokens, query)  # the mask view outlines its row
    return {"mode": mode, "query": query}


def attention_view(sel: Selection) -> None:
    """View 1: the selected head (or mean/max over heads) large with one query's row
    under it, and all heads."""
    name, result, layer, head = sel.name, sel.result, sel.layer, sel.head
    mode, q = sel.options["mode"], sel.options["query"]
    attn = result.outputs["attn"]  # (L, H, T, T)
    one = head if mode == "selected head" else None  # mean and max: the same for every head
    presenting = presenter.is_on()
    left, right = (st.container(), st.container()) if presenting else st.columns([3, 2])
    with left:
        if presenting and one is not None:  # the heatmap alone fits a projector's screen
            fig = specs.get(specs.compare, name, result, layer, head)
        else:
            fig = specs.get(specs.attention, name, result, layer, one, mode, q)
        plot(fig, key="attn_big", on_select=click.on_click("attn_big"))
    with right, presenter.notes():
        st.caption(
            "Rows are queries (the token doing the looking), columns are keys; the upper "
            "triangle is empty because of the causal mask. The bars under the heatmap are "
            f"the outlined row: where query {q} looks (pick it in Query token). "
            + (
                "Each cell is the largest weight any head of this layer gives, so rows can "
                "sum to more than 1."
                if mode == "max over heads"
                else row_sum_note(
                    specs.head_weights(result, layer, one, mode),
                    sel.model.config.attention,
                    sel.model.config.attn_eps,
                )
            )
            + " Tokens marked * are pieces of unknown words."
        )
        downloads.arrays("attention", {"attn": attn}, result.display_tokens, layer, head)
    if mode == "selected head":
        walkthrough.section(sel, q)
    st.subheader("All layers and heads")
    plot(specs.get(specs.head_grid, name, result), key="attn_grid")


def row_sum_note(weights: np.ndarray, attention: str, eps: float) -> str:
    """What the rows of the shown (T, T) weights sum to, measured."""
    sums = weights.sum(-1)  # (T,)
    if attention == "softmax" or np.allclose(sums, 1.0, atol=1e-3):
        return "Each row sums to 1."
    if attention == "delta":
        return (
            f"Rows sum to between {sums.min():.3f} and {sums.max():.3f}, and weights can be "
            "negative (blue): the delta model's implied matrix (QKᵀ ⊙ M)(I + L)⁻¹ diag(β) says "
            "how much of each earlier value its state still returns after later keys erased "
            "part of it; it is not a distribution."
        )
    return (
        f"Rows sum to between {sums.min():.3f} and {sums.max():.3f}, not 1: linear attention "
        f"divides by φ(q_i)ᵀz_i + ε with ε = {eps:g}, so row i sums to "
        "φ(q_i)ᵀz_i / (φ(q_i)ᵀz_i + ε), and the head passes on that share of the weighted "
        "sum of values."
    )


QKV = {"q": "query Q", "k": "key K", "v": "value V", "head_out": "output (attn · V)"}


def shapes_options(sel: Selection) -> dict:
    """Which tensor of the selected head the heatmap shows."""
    which = st.radio(
        "Tensor of the selected head",
        list(QKV),
        horizontal=True,
        key="qkv_pick",
        format_func=QKV.get,
    )
    return {"tensor": which}


def shapes_view(sel: Selection) -> None:
    """View 3: the multi-head reshape with this model's numbers, and Q/K/V of one head."""
    name, result = sel.name, sel.result
    if lacks(sel, QKV, "The Q/K/V shapes view"):
        return
    # Full width: each box is one line of text and sizes itself to it.
    plot(specs.get(specs.shape_flow, name, result, sel.layer), key="shape_flow")
    which = sel.options["tensor"]
    plot(specs.get(specs.qkv, name, result, sel.layer, sel.head, which), key="qkv")
    tensors = {n: result.outputs[n] for n in QKV}
    downloads.arrays("qkv", tensors, result.display_tokens, sel.layer, sel.head)


def positional_options(sel: Selection) -> dict:
    """The encoding dimensions the curves show."""
    if "pos_enc" not in sel.result.outputs:  # the view says why
        return {"dims": ()}
    pe = loaders.get_pos_enc(sel.name)  # (P, C)
    sinusoidal = sel.model.config.position_scheme == "sinusoidal"
    options = list(range(pe.shape[1]))
    if "pe_dims" in st.session_state:  # kept from a wider model: drop what this one lacks
        st.session_state["pe_dims"] = [d for d in st.session_state["pe_dims"] if d < len(options)]
    else:  # the default goes in once: a widget given both a default and a state value warns
        st.session_state["pe_dims"] = default_dims(pe.shape[1])
    dims = st.multiselect(
        "Dimensions",
        options,
        format_func=lambda d: vp.dimension_name(d, sinusoidal),
        key="pe_dims",
    )
    return {"dims": tuple(dims)}


def positional_view(sel: Selection) -> None:
    """View 4: positional-encoding curves, the PE matrix and position similarity."""
    name, result = sel.name, sel.result
    if lacks(sel, ["pos_enc"], "The positional-encoding view"):
        return
    pe = loaders.get_pos_enc(name)  # (P, C): the model's own encoding over its context
    kind = (
        "sinusoidal"
        if sel.model.config.position_scheme == "sinusoidal"
        else "learned embedding (wpe)"
    )
    st.caption(
        f"This model's positional encoding is **{kind}**: one vector of d_model = "
        f"{pe.shape[1]} numbers per position, added to each token's embedding. Shown for "
        f"positions 0–{pe.shape[0] - 1}; your sentence uses positions 0–{result.T - 1}."
    )
    dims = sel.options["dims"]
    if dims:
        vega_lite(specs.get(specs.pe_curves, name, result, list(dims), result.T))
    c1, c2 = st.columns(2)
    with c1:
        vega_lite(specs.get(specs.pe_heatmap, name, result))
    with c2:
        vega_lite(specs.get(specs.pe_similarity, name, result))
    downloads.arrays("pos_enc", {"pos_enc": pe}, None)


def stats_view(sel: Selection) -> None:
    """View 7: per-head statistics with automatic labels."""
    table = specs.table(specs.head_stats, sel.name, sel.result)
    if table is None:
        st.info("Type at least two tokens to score the heads.")
        return
    st.caption(
        "Scores on this sentence: previous_token and first_token are mean attention weights "
        "(0–1), distance is the mean query–key distance in tokens, entropy is in bits. "
        "induction is measured apart from your sentence, as the model card measures it: on "
        "24 blocks of 24 random words, each repeated twice."
        + (
            " The delta model's implied weights are signed, so the columns from your "
            "sentence are taken on |weight| ÷ the row's sum of |weight|: each earlier "
            "token's share of the read-out in magnitude."
            if sel.model.config.attention == "delta"
            else ""
        )
    )
    # every head in view, no inner scroll (L2 H2/H3 were hidden under it); a model of
    # many heads (GPT-2 small: 144) scrolls inside a screen-tall table
    st.dataframe(table, hide_index=True, height="content" if table.num_rows <= 48 else 900)
    _behavioural(sel)


def _behavioural(sel: Selection) -> None:
    """The whole model's behavioural induction score beside the heads' attention-based one."""
    score = loaders.get_behavioural(sel.name)
    if score is None:
        return
    st.metric(
        "Behavioural induction score (whole model, nats)",
        f"{score['score']:.2f}",
        help="Olsson et al. 2022: the mean next-token loss on the second copy of "
        f"{score['sequences']} blocks of {score['period']} random words, each repeated twice, "
        "subtracted from the loss on the first copy. It reads only the predictions, so it "
        "also credits a model that copies through its state without an induction stripe "
        "(the delta model).",
    )
    st.caption(
        f"Loss on the first copy {score['first_copy_loss']:.2f} nats a token, on the second "
        f"{score['second_copy_loss']:.2f}: the model copies when the second is lower. "
        "The induction column above reads attention instead, head by head."
    )


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
    block_view.draw(sel)


RENDERERS = {
    "attention": attention_view,
    "compare": compare_view,
    "shapes": shapes_view,
    "positional": positional_view,
    "mask": mask_view,
    "block": block_numbers_view,
    "predict": predict_view,
    "stats": stats_view,
}
OPTIONS = {  # views with controls of their own; the others take no_options
    "attention": attention_options,
    "compare": compare_options,
    "shapes": shapes_options,
    "positional": positional_options,
    "predict": predict_options,
}
