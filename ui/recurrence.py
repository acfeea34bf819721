"""Views 5 and 6: causal mask beside the recurrent state, and next-token predictions."""

from __future__ import annotations

import numpy as np
import streamlit as st

from inference.analysis import id_to_token
from models.tokenizer import decode
from ui import downloads, loaders
from ui.figures import plot
from ui.text import plain
from viz import attention as va
from viz import tensors as vt
from viz.style import escape


def mask_view(name, model, result, layer, head) -> None:
    """Raw scores, the causal mask and the masked result; beside it the linear model's
    recurrent state S_i, normalizer z_i and output y_i, stepping token by token."""
    tokens = result.display_tokens
    out = result.outputs
    kind = model.config.attention
    st.markdown(
        f"**{kind.capitalize()} model, layer {layer}, head {head}.** "
        + (
            "Scores are QKᵀ/√d_head before the mask; the mask blocks keys after the query; "
            "softmax of the masked row gives the weights."
            if kind == "softmax"
            else "Scores are φ(Q)φ(K)ᵀ with φ(x) = elu(x) + 1; masked and divided by the row sum "
            "plus ε (φ(q_i)ᵀz_i + ε) they give the implied attention matrix."
        )
    )
    plot(
        va.causal_mask_panels(
            out["scores"][layer, head], out["attn"][layer, head], tokens, attention=kind
        ),
        key="mask_panels",
    )
    # The recurrent view needs a linear model: this one, or the shipped linear model.
    if result.recurrent is not None:
        lin_name, lin = name, result
    else:
        lin_name, lin = "linear", loaders.get_analysis("linear", result.text)
        why = (
            "uses softmax attention, which has no fixed-size state"
            if kind == "softmax"
            else "came without a recurrent step graph"
        )
        st.caption(
            f"The selected model {why}: the recurrent view below runs the shipped "
            "linear-attention model on the same sentence."
        )
    cfg = loaders.get_model(lin_name).config
    lay, hd = min(layer, cfg.n_layer - 1), min(head, cfg.n_head - 1)
    st.subheader(f"Linear attention as an RNN (layer {lay}, head {hd})")
    st.latex(
        r"S_i = S_{i-1} + \phi(k_i)v_i^\top,\quad z_i = z_{i-1} + \phi(k_i),\quad "
        r"y_i = \frac{\phi(q_i)^\top S_i}{\phi(q_i)^\top z_i + \epsilon}"
    )
    rec = lin.recurrent
    if lin.T > 1:
        i = st.slider("Token i", 0, lin.T - 1, lin.T - 1, key="rec_step", format="%d")
    else:
        i = 0
    st.markdown(
        f"After token {i}: **{plain(lin.tokens[i])}** — the state has the same "
        f"size, {cfg.d_head}×{cfg.d_head}, whatever i is."
    )
    c1, c2 = st.columns([3, 2])
    with c1:
        S = rec["state"][lay, hd, i]  # (D, D)
        plot(
            vt.matrix_heatmap(
                S, None, None, title=f"State S_{i}", x_title="value dim", y_title="key feature dim"
            ),
            key="rec_state",
        )
    with c2:
        plot(
            vt.vector_bar(rec["normalizer"][lay, hd, i], title=f"Normalizer z_{i}"),
            key="rec_z",
        )
        plot(vt.vector_bar(rec["y"][lay, hd, i], title=f"Output y_{i}"), key="rec_y")
    st.metric(
        "max |recurrent − parallel| (y, S, z and logits, all layers and heads)",
        f"{lin.recurrent_max_diff:.2e}",
    )
    st.caption(
        "Measured now: the step graph was rolled over your sentence token by token "
        "and compared with the parallel (T×T) graph."
    )
    downloads.arrays(
        "recurrent",
        {"state": rec["state"], "normalizer": rec["normalizer"], "y": rec["y"]},
        lin.tokens,
        lay,
        hd,
    )


def _percent_columns(k: int) -> dict:
    return {f"p #{r + 1}": st.column_config.NumberColumn(format="percent") for r in range(k)}


def _extend_text(new_text: str) -> None:
    st.session_state["text"] = new_text


def predict_view(name, model, result, layer, head) -> None:
    """Top-k next tokens at each position, and a generate button."""
    vocab = id_to_token(model)
    pos = st.select_slider(
        "Position",
        options=list(range(result.T)),
        value=result.T - 1,
        format_func=lambda i: f"{i}: {plain(result.tokens[i])}",  # options render markdown
        key="pred_pos",
    )
    c1, c2 = st.columns([3, 2])
    with c1:
        plot(
            vt.topk_bars(
                result.probs[pos],
                vocab[: result.probs.shape[1]],
                k=8,
                title=f"Next token after “{escape(result.tokens[pos])}”",
            ),
            key="topk",
        )
    with c2:
        k = min(3, result.probs.shape[1])
        top = np.argsort(-result.probs, axis=1)[:, :k]  # (T, k) most likely next ids
        table = {"position": list(range(result.T)), "token": result.tokens}
        for r in range(k):
            table[f"#{r + 1} next"] = [vocab[int(i)] for i in top[:, r]]
            table[f"p #{r + 1}"] = [float(result.probs[t, i]) for t, i in enumerate(top[:, r])]
        st.caption(f"Top {k} next tokens at every position, with their probabilities.")
        st.dataframe(table, hide_index=True, column_config=_percent_columns(k))
    n = st.slider("Tokens to generate", 1, 30, 10, key="gen_n")
    if st.button("Generate", key="generate", type="primary"):
        new = model.generate(result.ids, n)
        how = (
            "recurrent step graph, O(1) per token"
            if model.has_step
            else "fast graph over the last context window"
        )
        text = decode(model.tokenizer, result.ids + new)
        st.session_state["generated"] = (result.text, text, how)
    source, text, how = st.session_state.get("generated", (None, "", ""))
    if source == result.text:  # only for the sentence it continues
        st.success(f"{plain(text)}  \n_(greedy, {how})_")
        st.button("Use as the sentence", on_click=_extend_text, args=(text,), key="use_gen")
