"""Lesson "Soft vs hard attention": softmax_beta(QK^T/sqrt(d_head)) from uniform to argmax."""

from __future__ import annotations

import numpy as np
import streamlit as st

import lessons as ml
from ui.figures import plot
from ui.lessons.common import start
from ui.selection import Selection
from viz import lessons as vl

BETAS = (0.0, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 64.0, float("inf"))

INTRO = (
    "Attention turns scores into weights with a softmax. Put an *inverse temperature* "
    "β in front of the scores and you can slide from **soft** attention (every earlier "
    "token gets some weight) to **hard** attention (all weight on the best-scoring key)."
)


def _beta_label(beta: float) -> str:
    return "∞ (argmax)" if np.isinf(beta) else f"{beta:g}"


def bullets(attention: str) -> str:
    """What β = 0, 1 and ∞ mean, for a model with ``attention`` (``softmax`` or ``linear``).

    Hard attention as Xu et al. 2015 define it *samples* one location from the weights
    and is trained with a REINFORCE-style (score-function) or variational estimator; the
    β → ∞ limit here is its deterministic argmax cousin.
    """
    own = (
        "the model's own attention"
        if attention == "softmax"
        else "a softmax of this model's scores; the model itself uses "
        f"{'linear attention' if attention == 'linear' else 'the delta rule'} "
        "(no softmax), so no β gives its weights"
    )
    return (
        "- **β = 0**: every allowed key gets 1/(i+1), the average of all earlier tokens; "
        "the entropy reaches its maximum log₂(i+1) bits.\n"
        f"- **β = 1**: {own}.\n"
        "- **β → ∞**: each row becomes one-hot at its largest score, an argmax. Hard "
        "attention (Xu et al. 2015) instead *samples* one location from the weights and, "
        "since a sample has no gradient, is trained with a REINFORCE-style (score-function) "
        "or variational estimator; transformers train the soft version, whose gradient "
        "is exact."
    )


def page(sel: Selection) -> None:
    """Render the soft-vs-hard lesson."""
    sel = start(sel, "Soft vs hard attention", INTRO)
    if sel is None:
        return
    st.latex(
        r"a_{ij}(\beta) = \frac{\exp(\beta\, s_{ij})}{\sum_{j' \le i} \exp(\beta\, s_{ij'})},"
        r"\qquad s_{ij} = \frac{q_i \cdot k_j}{\sqrt{d_\text{head}}},\quad j \le i"
    )
    beta = st.select_slider(
        "β (inverse temperature)", BETAS, value=1.0, format_func=_beta_label, key="lesson_beta"
    )
    scores = ml.dot_product_scores(sel.head_array("q"), sel.head_array("k"))  # (T, T)
    weights = ml.softmax_beta(scores, beta)  # (T, T)
    entropy = ml.row_entropy(weights)  # (T,)
    T = sel.result.T
    max_entropy = float(np.log2(np.arange(1, T + 1)).mean())
    c1, c2, c3 = st.columns(3)
    c1.metric("Mean entropy (bits)", f"{entropy.mean():.3f}", help="0 = one-hot rows")
    c2.metric("Uniform attention's mean entropy", f"{max_entropy:.3f}")
    c3.metric("Mean largest weight per row", f"{weights.max(axis=1).mean():.3f}")
    left, right = st.columns([3, 2])
    title = f"L{sel.layer} H{sel.head}"
    with left:
        plot(vl.beta_attention(weights, sel.tokens, beta, title), key="lesson_beta_attn")
    with right:
        plot(vl.entropy_bars(entropy, sel.tokens, beta), key="lesson_beta_entropy")
    st.markdown(bullets(sel.model.config.attention))
    if sel.model.config.attention == "softmax":
        model_attn = sel.head_array("attn")  # (T, T)
        diff = float(np.abs(ml.softmax_beta(scores, 1.0) - model_attn).max())
        st.metric("max |softmax₁(scores) − model|", f"{diff:.1e}",
                  help="max |softmax₁(scores) − model's attention| over this head's weights.")  # fmt: skip
    elif sel.model.config.attention == "linear":
        st.caption(
            "This model uses linear attention, so its own weights are "
            f"φ(qᵢ)·φ(kⱼ) / (φ(qᵢ)ᵀzᵢ + ε), ε = {sel.model.config.attn_eps:g}, "
            "not a softmax: here the softmax is applied to its q·k/√d_head as a what-if."
        )
    else:
        st.caption(
            "This model uses the delta rule, so its own weights are the implied matrix "
            "(QKᵀ ⊙ M)(I + L)⁻¹ diag(β) (the visualizer's mask view), not a softmax: here "
            "the softmax is applied to its q·k/√d_head as a what-if."
        )
