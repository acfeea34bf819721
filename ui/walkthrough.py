"""“One query, step by step”: the selected query's row of the selected head, from q·k to
the weights and weights · V, in numbers (``inference.walkthrough``), one row per key."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from inference.walkthrough import walkthrough
from ui import presenter
from ui.figures import plot
from ui.lacking import lacks
from ui.selection import Selection
from ui.text import plain
from viz import tensors as vt

EXTRA = {"linear": ("phi_q", "phi_k"), "delta": ("beta",)}  # beyond q, k and v
USES = {"softmax": "q, k and v", "linear": "φ(q), φ(k) and v", "delta": "q, k, v and β"}
NOTE = {
    "softmax": "exp(s − max s) subtracts the row's largest score first: the same weights, "
    "without overflow.",
    "delta": "The last step mixes the row through every earlier key: a key's weight falls "
    "when a later, similar key overwrote what it wrote, so weights can be negative and "
    "need not sum to 1.",
}


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
    needs = ("q", "k", "v") + EXTRA.get(cfg.attention, ())
    st.subheader(f"One query, step by step: query {query}, layer {sel.layer}, head {sel.head}")
    if lacks(sel, needs, "The step-by-step walk-through"):
        return
    walk = walkthrough(sel.result, sel.layer, sel.head, query, cfg.attention, cfg.attn_eps)
    frame = table(walk, sel.tokens)
    last = frame.columns[-1]
    bars = (
        {}
        if cfg.attention == "delta"  # signed weights: numbers, not 0..1 bars
        else {
            last: st.column_config.ProgressColumn(last, format="%.4f", min_value=0.0, max_value=1.0)
        }
    )
    with st.container(key="walkthrough"):
        presenter.table(frame, height="auto", column_config=bars, float_format="{:.4f}",
                        bar=last if bars else None)  # fmt: skip
        title = f"weights · V: the head's output for query {query}, {walk.output.shape[0]} numbers"
        plot(vt.vector_bar(walk.output, title=title), key="walkthrough_output")
    error = float(np.abs(walk.weights - sel.head_array("attn")[query]).max())
    st.caption(
        "Computed here in float64 from the model's own "
        + USES.get(cfg.attention, "q, k and v")
        + f"; the last column is the heatmap's row {query} (max difference {error:.1e}). "
        + NOTE.get(
            cfg.attention, f"z = Σ φ(k_j) over the keys up to the query, ε = {cfg.attn_eps:g}."
        )
        + f" Query token: {plain(sel.tokens[query])}."
    )
