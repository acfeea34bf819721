"""“One query, step by step”: the selected query's row of the selected head, from q·k to
the weights and weights · V, in numbers (``inference.walkthrough``), one row per key."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from inference.walkthrough import walkthrough
from ui.figures import plot
from ui.lacking import lacks
from ui.selection import Selection
from ui.text import plain
from viz import tensors as vt


def _shown(values: np.ndarray) -> list[str]:
    """Numbers as the table prints them; a masked −∞ as “−∞”."""
    return ["−∞" if v == -np.inf else f"{v:.4g}" for v in values]


def table(walk, tokens: list[str]) -> pd.DataFrame:
    """One row per key (position·token), one column per step; the weights as numbers
    (drawn as bars by the column config)."""
    frame = {"key": [f"{j}·{t}" for j, t in enumerate(tokens)]}
    *steps, (last, weights) = walk.rows
    for label, values in steps:
        frame[label] = _shown(values)
    frame[last] = weights
    return pd.DataFrame(frame)


def section(sel: Selection, query: int) -> None:
    """The walk-through of query ``query`` of the selected head (nothing for a model
    without q, k and v: one line says so)."""
    cfg = sel.model.config
    needs = ("q", "k", "v") + (("phi_q", "phi_k") if cfg.attention == "linear" else ())
    st.subheader(f"One query, step by step: query {query}, layer {sel.layer}, head {sel.head}")
    if lacks(sel, needs, "The step-by-step walk-through"):
        return
    walk = walkthrough(sel.result, sel.layer, sel.head, query, cfg.attention, cfg.attn_eps)
    frame = table(walk, sel.tokens)
    last = frame.columns[-1]
    with st.container(key="walkthrough"):
        st.dataframe(
            frame,
            hide_index=True,
            column_config={
                last: st.column_config.ProgressColumn(
                    last, format="%.4f", min_value=0.0, max_value=1.0
                )
            },
        )
        title = f"weights · V: the head's output for query {query}, {walk.output.shape[0]} numbers"
        plot(vt.vector_bar(walk.output, title=title), key="walkthrough_output")
    error = float(np.abs(walk.weights - sel.head_array("attn")[query]).max())
    st.caption(
        "Computed here in float64 from the model's own "
        + ("q, k and v" if cfg.attention == "softmax" else "φ(q), φ(k) and v")
        + f"; the last column is the heatmap's row {query} (max difference {error:.1e}). "
        + (
            "exp(s − max s) subtracts the row's largest score first: the same weights, "
            "without overflow."
            if cfg.attention == "softmax"
            else f"z = Σ φ(k_j) over the keys up to the query, ε = {cfg.attn_eps:g}."
        )
        + f" Query token: {plain(sel.tokens[query])}."
    )
