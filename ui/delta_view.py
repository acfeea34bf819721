"""The mask view's recurrent section for a delta model: one token of "erase, then write"
(``inference.delta_rule``), beside which the mask view then shows linear attention's
additive state."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from inference.analysis import Analysis
from inference.delta_rule import delta_step
from inference.text_input import visible
from ui import downloads
from ui.figures import plot
from ui.text import plain
from viz import tensors as vt

STATE_AXES = ("value dim", "key dim")  # S is (key dim, value dim): S_tᵀ k reads a value


def _state(matrix, title: str) -> dict:
    return vt.matrix_heatmap(matrix, None, None, title, *STATE_AXES)


def section(
    result: Analysis, layer: int, head: int, slider: Callable[[], int], name: str = "delta"
) -> int:
    """One token of one head of a delta model (``result`` with its recurrent form, the
    model ``name``): the state before, the rank-1 write, the state after; what the state
    recalled for k_i against v_i, and the error it wrote. ``slider`` draws the token
    control under the heading; returns the token it gave."""
    st.subheader(f"The delta rule as an RNN: erase, then write (layer {layer}, head {head})")
    i = slider()
    step = delta_step(result, layer, head, i)
    st.latex(
        r"S_t = S_{t-1} + \beta_t\,k_t\,(v_t - S_{t-1}^\top k_t)^\top,\quad "
        r"y_t = S_t^\top q_t"
    )
    token = plain(visible(result.tokens[i]))
    st.markdown(
        f"Token {i}: **{token}**, write strength β = **{step.beta:.2f}**. The state first "
        f"reads what it holds for this key (S_(t−1)ᵀk_t), then writes only the error: "
        f"it recalled v_t with a relative error of **{step.recall_before:.0%}** before "
        f"the write and **{step.recall_after:.0%}** after (= (1 − β) times as much)."
    )
    cols = st.columns(3)
    figures = [
        (_state(step.before, f"S_{i - 1} (before)" if i else "S_−1 = 0"), "delta_before"),
        (_state(step.update, "write: β k (v − read)ᵀ"), "delta_update"),
        (_state(step.after, f"S_{i} (after)"), "delta_after"),
    ]
    for col, (fig, key) in zip(cols, figures, strict=True):
        with col:
            plot(fig, key=key)
    cols = st.columns(3)
    bars = [
        (step.value, f"v_{i}: to store", "delta_value"),
        (step.read, f"read: S_{i - 1}ᵀ k_{i}", "delta_read"),
        (step.error, "error: v − read", "delta_error"),
    ]
    for col, (values, title, key) in zip(cols, bars, strict=True):
        with col:
            plot(vt.vector_bar(values, title=title), key=key)
    st.metric(
        "max |recurrent − parallel| (y, S and logits, all layers and heads)",
        f"{result.recurrent_max_diff:.2e}",
    )
    st.caption(
        "Measured now: the step graph was rolled over your sentence token by token and "
        "compared with the parallel graph. The state has the same size, "
        f"{step.before.shape[0]}×{step.before.shape[1]}, whatever the token."
    )
    downloads.arrays(
        "delta_step",
        {"state": result.outputs["state"], "beta": result.outputs["beta"][..., None]},
        result.display_tokens,
        layer,
        head,
        downloads.about(name, result, layer, head, "mask", step=i),
    )
    return i
