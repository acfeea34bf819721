"""Lesson "Scoring functions": additive (Bahdanau) vs scaled dot-product, and why 1/sqrt(d)."""

from __future__ import annotations

import numpy as np
import streamlit as st

import lessons as ml
from ui.figures import plot
from ui.lessons.check import check_yourself
from ui.lessons.common import start
from ui.selection import Selection
from viz import lessons as vl

DIMS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)

INTRO = (
    "A score says how well query i matches key j. Bahdanau et al. (2015) learned a tiny "
    "neural network for it (**additive** attention); Vaswani et al. (2017) use a plain "
    "**dot product** divided by √d, which is one matrix multiplication for all pairs."
)


DRAWS = 2000


@st.cache_data(show_spinner=False)
def _variance(n_samples: int = DRAWS) -> dict:
    """The synthetic experiment (random vectors, not the model), cached per server."""
    return ml.score_variance_by_dim(DIMS, n_samples=n_samples, seed=0)


def scores_figure(sel: Selection):
    """Additive (untrained W_q, W_k, w) beside scaled dot-product scores (T, T) of the
    selected head's q and k: the lesson's figure, also the lecture path's."""
    q, k = sel.head_array("q"), sel.head_array("k")  # (T, d_head) each
    d = q.shape[-1]
    W_q, W_k, w = ml.random_additive_params(d, hidden=d, seed=0)
    additive = ml.additive_scores(q, k, W_q, W_k, w)  # (T, T)
    dot = ml.dot_product_scores(q, k, scaled=True)  # (T, T)
    titles = ["additive (untrained W_q, W_k, w)", "scaled dot product q·k/√d"]
    return vl.side_by_side([additive, dot], titles, sel.tokens)


def _compare_scores(sel) -> None:
    d = sel.head_array("q").shape[-1]
    st.latex(r"\text{additive: } s_{ij} = w^\top \tanh(W_q q_i + W_k k_j)")
    st.latex(r"\text{scaled dot product: } s_{ij} = \frac{q_i^\top k_j}{\sqrt{d}}")
    plot(scores_figure(sel), key="lesson_scores")
    T = sel.result.T
    c1, c2 = st.columns(2)
    c1.metric("Additive: numbers in the (T, T, h) tensor", f"{T * T * d:,}", help="h = d here")
    c2.metric("Dot product: numbers in the (T, T) scores", f"{T * T:,}")
    st.caption(
        "Same queries and keys from the selected head. The additive scorer's weights are "
        "random (this model never learned one), so compare the *computation*, not the "
        "pattern: additive needs a (T, T, h) tensor and a tanh per pair, the dot product "
        "is a single QKᵀ that GPUs do best."
    )


def _why_sqrt_d(sel) -> None:
    st.header("Why divide by √d?")
    st.markdown(
        "If the entries of q and k are independent with mean 0 and variance 1, then "
        "q·k is a sum of d such products: its variance is **d** (Vaswani et al. 2017, "
        "footnote 4). Big scores push the softmax into a near one-hot corner where its "
        "gradient almost vanishes; dividing by √d brings the variance back to **1**."
    )
    st.latex(
        r"\operatorname{Var}(q^\top k) = \sum_{i=1}^{d} \operatorname{Var}(q_i k_i) = d,"
        r"\qquad \operatorname{Var}\!\left(\frac{q^\top k}{\sqrt d}\right) = 1"
    )
    var = _variance()
    q, k = sel.head_array("q"), sel.head_array("k")  # (T, d_head) each
    own = ml.model_score_variance(q, k)
    fig = vl.variance_by_dim(var["dims"], var["unscaled"], var["scaled"], measured=own)
    plot(fig, key="lesson_var")
    d = own["d"]
    i = int(np.argmin(np.abs(var["dims"] - d)))
    st.markdown(
        f"**Synthetic: random unit-variance vectors (not the model)**, d = {var['dims'][i]}"
    )
    c1, c2 = st.columns(2)
    c1.metric(f"Var(q·k), random vectors, d = {var['dims'][i]}", f"{var['unscaled'][i]:.1f}")
    c2.metric(f"Var(q·k/√d), random vectors, d = {var['dims'][i]}", f"{var['scaled'][i]:.2f}")
    st.caption(
        f"{DRAWS:,} random pairs q, k with independent N(0, 1) entries per dimension; "
        "nothing here comes from the model."
    )
    st.markdown(
        f"**Measured on the model: L{sel.layer} H{sel.head}, d_head = {d}, "
        f"over the {own['n_pairs']:,} causal pairs j ≤ i of this sentence**"
    )
    dot = ml.dot_product_scores(q, k)  # (T, T)
    weights_1 = ml.softmax_beta(dot, 1.0)  # (T, T)
    weights_d = ml.softmax_beta(dot, float(np.sqrt(d)))  # unscaled = beta sqrt(d)
    c1, c2, c3 = st.columns(3)
    c1.metric("This head: Var(q·k)", f"{own['unscaled']:.3g}")
    c2.metric("This head: Var(q·k/√d_head)", f"{own['scaled']:.3g}")
    c3.metric(
        "This head, top weight: /√d → without",
        f"{weights_1.max(1).mean():.2f} → {weights_d.max(1).mean():.2f}",
        help="Mean over queries of the largest attention weight: with the 1/√d "
        "(the model) and without it (scores × √d). Closer to 1 = closer to one-hot.",
    )
    st.caption(
        f"The model's q and k entries are not unit-variance (here Var(q) = "
        f"{own['var_q']:.3g}, Var(k) = {own['var_k']:.3g}) nor independent, so its score "
        "variance need not be d or 1; the dots on the chart mark this head."
        + (
            f" This model uses {sel.model.config.attention} attention: it never divides q·k "
            "by √d, these are the scores a softmax would see."
            if sel.model.config.attention != "softmax"
            else ""
        )
    )


def page(sel: Selection) -> None:
    """Render the scoring-functions lesson."""
    sel = start(sel, "Scoring functions", INTRO)
    if sel is None:
        return
    _compare_scores(sel)
    _why_sqrt_d(sel)
    check_yourself(
        "Write down the softmax attention formula.",
        "For queries Q, keys K and values V (rows are positions, d the key width): "
        "**Attention(Q, K, V) = softmax(QKᵀ / √d) V**, the softmax taken over the keys of "
        "each query's row, a causal model adding −∞ above the diagonal first (Vaswani et al. "
        "2017, eq. 1). The scaled dot product above is QKᵀ/√d of the selected head; the "
        "visualizer's attention view shows softmax of it, each row summing to 1.",
        "softmax_formula",
    )
