"""The attention view (view 1): the selected head, or the mean or max over heads, large with
one query's row under it, that query step by step in numbers, and every head as small
multiples. Click a cell (``ui.click``) or pick the Query token."""

from __future__ import annotations

import numpy as np
import streamlit as st

from inference import view_specs as figs
from inference.text_input import visible
from ui import click, downloads, numbers, presenter, specs, walkthrough
from ui.figures import plot
from ui.selection import Selection


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
    one = head if mode == "selected head" else None  # mean and max: the same for every head
    presenting = presenter.is_on()
    # the heatmap across the page, its notes under it: in a column beside them its square
    # cells were 231 px across at 1280 px (#44 item 1)
    left, right = st.container(), st.container()
    with left:
        if presenting and one is not None:  # the heatmap alone fits a projector's screen
            fig = specs.shown(figs.compare, name, result, layer, head)
        else:
            fig = specs.shown(figs.attention, name, result, layer, one, mode, q)
        # a clicked query's row bars are drawn in the browser before the rerun
        plot(fig, key="attn_big", on_select=click.on_click("attn_big"), instant_row=True)
        weights = figs.head_weights(result, layer, one, mode)  # (T, T), as drawn
        numbers.show(weights, result.display_tokens, f"Attention weights ({mode})", "attn_big")
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
                    weights,
                    sel.model.config.attention,
                    sel.model.config.attn_eps,
                )
            )
            + " Tokens marked * are pieces of unknown words."
        )
        shown = {k: result.outputs[k] for k in ("attn", "scores") if k in result.outputs}
        about = downloads.about(name, result, layer, head, "attention", mode=mode, query=q)
        downloads.arrays("attention", shown, result.display_tokens, layer, head, about)
    if mode == "selected head":
        walkthrough.section(sel, q)
    st.subheader("All layers and heads")
    plot(specs.shown(figs.head_grid, name, result), key="attn_grid")


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
