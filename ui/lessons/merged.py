"""Lesson "Merged bilinear form": W_Q W_K^T and W_V W_O of one head (Elhage et al. 2021)."""

from __future__ import annotations

import numpy as np
import streamlit as st

import lessons as ml
from ui.figures import plot
from ui.lessons.common import start
from ui.selection import Selection
from viz import lessons as vl
from viz import tensors as vt

INTRO = (
    "A head never uses W_Q or W_K alone, only the product: q·k = x W_Q W_Kᵀ xᵀ. So each "
    "head is one **d_model × d_model** matrix W_QK = W_Q W_Kᵀ (and likewise "
    "W_OV = W_V W_O for what it writes), built from two thin d_model × d_head factors. "
    "(Elhage et al. 2021, *A Mathematical Framework for Transformer Circuits*.)"
)


DELTA_NOTE = (
    "The delta model passes W_Q x and W_K x through a short causal convolution, SiLU and "
    "L2 normalisation before its scores, so no single matrix gives them and there is no "
    "score check here. W_QK below is the bilinear form of its projections alone."
)


ROTARY_NOTE = (
    "This model turns q and k by their positions (rotary positions, RoPE) between the "
    "projections and the scores: q_i·k_j = x_i W_Q R(j − i) W_Kᵀ x_jᵀ, a different matrix "
    "for every offset, so there is no score check here. W_QK below is the bilinear form "
    "at offset 0 (a token with itself). The positional view shows the score by offset."
)


def _scores_check(sel, W_QK: np.ndarray) -> None:
    cfg = sel.model.config
    x = sel.result.outputs["attn_in"][sel.layer]  # (T, C)
    merged = ml.merged_scores(x, W_QK, cfg.d_head)  # (T, T)
    reference = ml.reference_scores(sel.result.outputs, sel.layer, sel.head, cfg.attention)
    diff = np.abs(merged - reference)  # (T, T)
    st.latex(
        r"s_{ij} = \frac{\tilde x_i\, W_{QK}\, \tilde x_j^\top}{\sqrt{d_\text{head}}},\quad "
        r"\tilde x = [x, 1],\quad W_{QK} = \begin{bmatrix} W_Q^\top \\ b_Q^\top \end{bmatrix}"
        r"\begin{bmatrix} W_K^\top \\ b_K^\top \end{bmatrix}^\top"
    )
    st.metric("max |merged scores − model's QKᵀ/√d|", f"{diff.max():.1e}")
    titles = ["from W_QK", "model's QKᵀ/√d", "|difference|"]
    plot(vl.side_by_side([merged, reference, diff], titles, sel.tokens), key="lesson_merged")
    source = (
        "the model's exported scores"
        if cfg.attention == "softmax"
        else "q·kᵀ/√d recomputed from the model's exported q and k (a linear model's "
        "own scores are φ(Q)φ(K)ᵀ, which no single matrix reproduces)"
    )
    st.caption(
        f"x is the LayerNorm'd input this layer reads. The extra row and column (the "
        f"appended 1) carry the biases, so the match is exact. Compared with {source}."
    )


def _rank(sel, name: str, M: np.ndarray, key: str) -> None:
    d = sel.model.config.d_head
    sv = ml.singular_values(M)  # (min(M.shape),)
    rank = ml.numerical_rank(sv, M.shape)
    c1, c2 = st.columns(2)
    c1.metric(f"numerical rank of {name}", rank, help=f"at most d_head = {d}")
    c2.metric(f"size of {name}", f"{M.shape[0]} × {M.shape[1]}")
    plot(vl.singular_values_bar(sv, d, title=f"Singular values of {name}"), key=key)


def _parameters(sel) -> None:
    cfg, weights = sel.model.config, sel.model.weights
    if weights is None:
        counts = ml.head_parameter_counts(cfg)
        where = "From the config's formula (no weight arrays loaded)."
    else:
        counts = ml.weight_parameter_counts(weights, sel.layer, sel.head, cfg.n_head)
        where = f"Counted on the model's weight arrays (L{sel.layer} H{sel.head})."
    st.header("Parameters per head")
    st.latex(
        r"\underbrace{d_\text{model} \times 3\, d_\text{head}}_{Q,\,K,\,V}"
        rf" = {cfg.d_model} \times {3 * cfg.d_head} = {3 * cfg.d_model * cfg.d_head:,}"
    )
    c1, c2, c3 = st.columns(3)
    c1.metric("one head (Q, K, V, O + biases)", f"{counts['per_head']:,}")
    c2.metric("whole model", f"{counts['model']:,}")
    c3.metric("all heads' share of the model", f"{counts['all_heads_fraction']:.1%}")
    plot(vl.parameter_bars(counts), key="lesson_params")
    C = cfg.d_model
    biases = "its weights and biases" if cfg.bias else "its weights (this model has no biases)"
    shown = "The W_QK drawn above is" if weights is not None else "W_QK in this form would be"
    st.caption(
        f"{where} {shown} ({C} + 1) × ({C} + 1) = {counts['merged_entries']:,} "
        f"entries (d_model + 1: the last row and column hold the biases) but only "
        f"{counts['merged_free']:,} free parameters stand behind it (the head's W_Q and "
        f"W_K, {biases}): a matrix of rank at most d_head = {cfg.d_head}."
    )


def page(sel: Selection) -> None:
    """Render the merged-bilinear-form lesson."""
    sel = start(sel, "The merged bilinear form", INTRO)
    if sel is None:
        return
    weights = sel.model.weights
    if weights is None or "attn_in" not in sel.result.outputs:
        st.info(
            "This lesson needs the model's weight matrices W_Q, W_K, W_V, W_O, i.e. a "
            "checkpoint (.safetensors, or a nanoGPT ckpt.pt). This model came as ONNX "
            "graphs only. Upload a checkpoint in the sidebar under *Inspect your own model*.",
            icon=":material/key:",
        )
        _parameters(sel)
        return
    n_head, C = sel.model.config.n_head, sel.model.config.d_model
    W_QK = ml.merged_qk(weights, sel.layer, sel.head, n_head)  # (C + 1, C + 1)
    if sel.model.config.attention == "delta":
        st.info(DELTA_NOTE)
    elif sel.model.config.position_scheme == "rotary":
        st.info(ROTARY_NOTE)
    else:
        _scores_check(sel, W_QK)
    st.header("W_QK is low-rank")
    labels = [*map(str, range(C)), "bias"]  # unique: drawn as they are, no position prefix
    title = f"W_QK of L{sel.layer} H{sel.head} ({C + 1} × {C + 1}, last row/column: the bias)"
    plot(vt.matrix_heatmap(W_QK, labels, labels, title, "key side", "query side"), key="lesson_wqk")
    _rank(sel, "W_QK", W_QK, "lesson_sv_qk")
    st.header("W_OV: what the head writes")
    W_OV = ml.merged_ov(weights, sel.layer, sel.head, n_head)  # (C, C)
    _rank(sel, "W_OV", W_OV, "lesson_sv_ov")
    _parameters(sel)
