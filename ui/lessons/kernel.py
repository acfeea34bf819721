"""Lesson "Kernel view": exp(q.k) vs phi(q).phi(k), and reordering the products."""

from __future__ import annotations

import numpy as np
import streamlit as st

import lessons as ml
from ui.figures import plot
from ui.lessons.check import check_yourself
from ui.lessons.common import start
from ui.selection import Selection
from viz import lessons as vl

INTRO = (
    "Katharopoulos et al. (2020) read attention as a **kernel**: a similarity "
    "sim(q, k) ≥ 0, normalized over the keys. Softmax attention uses "
    "sim = exp(q·k/√d). Linear attention uses a feature map φ(x) = elu(x) + 1 and "
    "sim = φ(q)·φ(k), which lets the matrix products be reordered."
)


DELTA_IS_NO_KERNEL = (
    "The delta model is not a kernel of this kind: each output is read from a state that "
    "later keys partly erased, so its implied weights mix every earlier key and can be "
    "negative (the mask view shows them). Both panels are what-ifs on its q and k."
)


def _similarities(sel) -> None:
    eps = sel.model.config.attn_eps
    st.latex(
        r"y_i = \frac{\sum_{j \le i} \operatorname{sim}(q_i, k_j)\, v_j}"
        r"{\sum_{j \le i} \operatorname{sim}(q_i, k_j) + \varepsilon},\qquad "
        r"\operatorname{sim}_\text{softmax} = e^{q^\top k/\sqrt d}\ (\varepsilon = 0),\quad "
        r"\operatorname{sim}_\text{linear} = \varphi(q)^\top \varphi(k)"
    )
    q, k = sel.head_array("q"), sel.head_array("k")  # (T, d_head)
    weights = ml.kernel_weights(q, k, eps)  # {"exp": (T, T), "phi": (T, T)}
    exp_attn, phi_attn = weights["exp"], weights["phi"]
    titles = ["exp(q·k/√d), normalized", f"φ(q)·φ(k), normalized with ε = {eps:g}"]
    fig = vl.side_by_side([exp_attn, phi_attn], titles, sel.tokens, diverging=False)
    plot(fig, key="lesson_kernel")
    kind = sel.model.config.attention
    c1, c2, c3 = st.columns(3)
    if kind in ("softmax", "linear"):
        own = exp_attn if kind == "softmax" else phi_attn
        # short labels: a metric's label is one line, cut at a third of the page at 1280 px
        c1.metric(
            f"max |{kind} − model|",
            f"{np.abs(own - sel.head_array('attn')).max():.1e}",
            help=f"max |{kind} kernel − model's attention|: the kernel this model was "
            "trained with, recomputed in float64 from its q and k"
            + (f", with the model's ε = {eps:g}." if kind == "linear" else "."),
        )
    else:
        st.caption(DELTA_IS_NO_KERNEL)
    c2.metric(
        "max |exp − φ|",
        f"{np.abs(exp_attn - phi_attn).max():.3f}",
        help="max |exp kernel − φ kernel| over the normalized weights.",
    )
    c3.metric(
        "smallest φ row sum",
        f"{phi_attn.sum(axis=1).min():.3g}",
        help="Over the queries of this head on this sentence.",
    )
    largest = float(np.abs(ml.dot_product_scores(q, k)[ml.causal_allowed(len(q))]).max())
    st.caption(
        f"Both use the same q and k of the {kind} model's selected head; the model was "
        f"trained with the {kind} kernel, so the other panel is a what-if. "
        "The φ weights divide by the row sum plus ε, so row i sums to "
        "φ(qᵢ)ᵀzᵢ / (φ(qᵢ)ᵀzᵢ + ε), zᵢ = Σⱼ≤ᵢ φ(kⱼ), which is below 1 when φ(qᵢ)ᵀzᵢ "
        "is comparable to ε. The exp panel subtracts each row's largest score before "
        "exp, which leaves the normalized weights unchanged and avoids overflow (this "
        f"head's largest |q·k/√d| is {largest:.3g}; exp overflows above about 709)."
    )


def _reordering(sel) -> None:
    st.header("Reordering the products")
    st.latex(
        r"\underbrace{\big(\varphi(Q)\,\varphi(K)^\top\big)}_{T \times T}\,V"
        r"\;=\;\varphi(Q)\,\underbrace{\big(\varphi(K)^\top V\big)}_{d \times d}"
        r"\qquad O(T^2 d)\ \to\ O(T d^2)"
    )
    q, k, v = (sel.head_array(n) for n in ("q", "k", "v"))  # (T, d_head) each
    check = ml.linear_reorder_check(q, k, v)
    c1, c2, c3 = st.columns(3)
    c1.metric("max |left − right|", f"{check['max_abs_diff']:.1e}", help="float64")
    c2.metric("FLOPs, (φ(Q)φ(K)ᵀ)V", f"{check['flops_quadratic']:,}")
    c3.metric("FLOPs, φ(Q)(φ(K)ᵀV)", f"{check['flops_linear']:,}")
    T, d = q.shape
    lengths = np.unique(np.geomspace(1, 4096, 40).astype(int))
    plot(vl.flops_by_length(lengths, d, current_T=T), key="lesson_flops")
    st.markdown(
        "Matrix products are associative, so both orders give the same numbers (up to "
        "rounding). The right order never builds the T × T matrix: it is cheaper as soon "
        f"as T > d = {d}. The exp kernel cannot be split like this (exp(q·k) is not a "
        "finite dot product φ(q)·φ(k)), so softmax attention stays quadratic."
    )
    st.caption(
        "Shown without the causal mask and the normalizer, to keep the algebra plain. "
        r"The causal model replaces φ(K)ᵀV by running sums "
        r"$S_i = \sum_{j \le i} \varphi(k_j) v_j^\top$ (the recurrent state in the "
        r"visualizer's mask view) and divides by $\varphi(q_i)^\top z_i + \varepsilon$."
    )


def page(sel: Selection) -> None:
    """Render the kernel-view lesson."""
    sel = start(sel, "The kernel view", INTRO)
    if sel is None:
        return
    _similarities(sel)
    check_yourself(
        "Write attention with a general similarity function sim(q, k).",
        "y_i = Σ_j sim(q_i, k_j) v_j / Σ_j sim(q_i, k_j), with sim ≥ 0 (Katharopoulos et al. "
        "2020, eq. 2; a causal model sums over j ≤ i). sim(q, k) = exp(qᵀk/√d) gives softmax "
        "attention: the left panel above, computed from this head's q and k.",
        "similarity",
    )
    _reordering(sel)
    check_yourself(
        "Write attention through a feature map φ, and say why it can be linear in n.",
        "With sim(q, k) = φ(q)ᵀφ(k): y_i = φ(q_i)ᵀ S_i / (φ(q_i)ᵀ z_i + ε), S_i = Σ_{j≤i} "
        "φ(k_j) v_jᵀ, z_i = Σ_{j≤i} φ(k_j) (eq. 4-7; here φ(x) = elu(x) + 1). The products "
        "reorder, (φ(Q)φ(K)ᵀ)V = φ(Q)(φ(K)ᵀV): a d × d state instead of an n × n matrix, "
        "so O(n·d²). Measured above: both orders agree to the printed max |left − right|.",
        "feature_map",
    )
