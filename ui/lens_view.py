"""The Logit lens view: the residual stream after each block read through the final
LayerNorm and the unembedding (nostalgebraist 2020), and the direct logit attribution of
every head at one position (Elhage et al. 2021), from the lab graph's run
(``models/lab.py``)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from inference import lab
from inference.text_input import visible
from ui import downloads, loaders, presenter
from ui.figures import plot
from ui.lab_view import has_lab
from ui.notices import say
from ui.predictions import opening_position
from ui.selection import Selection
from ui.text import plain
from viz import lab as figs

DEPTH = "depth (embedding, then after each block)"
LENS_AXES = {"lens_top": (DEPTH, "position (top token id)"), "lens_top_prob": (DEPTH, "position"),
             "lens_target_prob": (DEPTH, "position (p of the next token)"),
             "target": ("position (next token id)",), "dla_heads": ("layer", "head", "position"),
             "dla_mlp": ("layer", "position"), "dla_embed": ("position",),
             "dla_bias": ("position",)}  # fmt: skip


def lens_options(sel: Selection) -> dict:
    """The position whose prediction the attribution explains (``lens_pos``; it opens
    where the Predictions view does, on the last token whose next one is known)."""
    if not getattr(sel.model, "has_lab", False):
        return {}
    result = sel.result
    if st.session_state.get("lens_pos", 0) >= result.T:
        del st.session_state["lens_pos"]
    opening = {} if "lens_pos" in st.session_state else {"value": opening_position(result.T)}
    pos = st.select_slider("Position to attribute", options=list(range(result.T)), **opening,
                           format_func=lambda i: f"{i}: {plain(visible(result.tokens[i]))}",
                           key="lens_pos")  # fmt: skip
    return {"position": pos}


def lens_rows(n_layer: int) -> list[str]:
    """Row labels of the lens grid: the embedding, then after each block."""
    return ["embedding"] + [f"after block {i}" for i in range(n_layer)]


def lens_view(sel: Selection) -> None:
    """The lens grid (top token in each cell, coloured by the probability of the token
    that comes next) and the attribution of the chosen position's top prediction."""
    if not has_lab(sel):
        return
    if line := lab.too_long(sel.model.config, sel.result.T):
        say("warning", line)
        return
    out, vocab = lab.lab(sel.model, sel.result.ids), loaders.get_vocab(sel.name)
    tokens = [visible(t) for t in sel.result.tokens]
    top = [[vocab[int(i)] for i in row] for row in out["lens_top"]]  # as Predictions draws them
    L = sel.model.config.n_layer
    st.caption("Each cell: the top next token when the residual stream at that depth is read "
               "through the final LayerNorm and the unembedding. Colour: the probability there "
               "of the token that actually comes next (last column: of the model's own "
               "prediction). The last row is the model's output.")  # fmt: skip
    with presenter.above_fold(460):
        plot(figs.position_grid(out["lens_target_prob"], tokens, "Logit lens", "p(next)",
                                text=top, rows=lens_rows(L)), key="lens_grid")  # fmt: skip
    pos = sel.options["position"]
    target = vocab[int(out["target"][pos])]
    parts = {"embedding": float(out["dla_embed"][pos]), "biases": float(out["dla_bias"][pos]),
             **{f"MLP {i}": float(v) for i, v in enumerate(out["dla_mlp"][:, pos])}}  # fmt: skip
    total = float(out["dla_heads"][:, :, pos].sum()) + sum(parts.values())
    st.subheader(f"Direct logit attribution at {pos}: {tokens[pos]} → {target}")
    st.caption(f"Each head's output through W_O, the final LayerNorm (its scale frozen at this "
               f"run's) and the unembedding, as its share of the logit of “{target}”. The heads, "
               f"the MLPs, the embedding and the biases sum to the logit, {total:.2f}.")  # fmt: skip
    plot(figs.head_grid(out["dla_heads"][:, :, pos], f"Direct contribution to logit({target})",
                        "logit"), key="lens_dla")  # fmt: skip
    st.dataframe({"component": list(parts), "logit": np.round(list(parts.values()), 3)},
                 hide_index=True)  # fmt: skip
    named = {k: out[k] for k in LENS_AXES if k in out}
    about = downloads.about(sel.name, sel.result, sel.layer, sel.head, "lens", position=pos,
                            axes=LENS_AXES, depth=lens_rows(L))  # fmt: skip
    downloads.arrays("lens", named, None, manifest=about)
