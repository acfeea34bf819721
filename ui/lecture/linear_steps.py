"""Lecture steps after the transformer: linear attention as an RNN, complexity, and the
delta rule, a linear-time model that recalls."""

from __future__ import annotations

import numpy as np
import streamlit as st

from inference import view_specs as figs
from ui import loaders, specs
from ui.figures import plot
from ui.lecture.step import Deeper, state
from ui.recall_notes import card_recall, recall_caption, rows_max_pairs
from ui.selection import Selection
from viz import forgetting as vf
from viz import lessons as vl


def recurrence(sel: Selection) -> Deeper:
    """The linear model's state S_i after the last token, and recurrent = parallel."""
    lin = loaders.get_recurrent("linear", loaders.get_analysis("linear", sel.text))
    cfg = loaders.get_model("linear").config
    layer, head = min(sel.layer, cfg.n_layer - 1), min(sel.head, cfg.n_head - 1)
    i = lin.T - 1
    plot(specs.shown(figs.recurrent_state, "linear", lin, layer, head, i), key="lecture_state")
    st.metric(
        "max |recurrent − parallel| (y, S, z and logits, all layers and heads)",
        f"{lin.recurrent_max_diff:.2e}",
    )
    linear = state(sel, view="mask", model="linear", layer=layer, head=head)
    return Deeper("visualizer", "The causal mask and the recurrence, step by step", linear)


def complexity(sel: Selection) -> Deeper:
    """FLOPs of the two orders of linear attention against T, this sentence marked."""
    d = sel.model.config.d_head
    lengths = np.unique(np.geomspace(1, 4096, 40).astype(int))
    plot(vl.flops_by_length(lengths, d, current_T=sel.result.T), key="lecture_flops")
    return Deeper("complexity", "Measure both models on this server")


def recall(sel: Selection) -> Deeper:
    """Associative recall of the three shipped models against the number of pairs, from
    the model card: the top token over the whole vocabulary (the card's headline) and the
    ranking rule beside it, with how it is counted and what each model was trained with."""
    measured = {k: v for k in loaders.SHIPPED_KINDS if (v := card_recall(k))}
    if measured:
        plot(vf.accuracy_by_pairs(measured, rows_max_pairs(measured)), key="lecture_recall")
        st.caption(recall_caption(measured))
    return Deeper("forgetting", "Try the recall test on the three models")
