"""The Q/K/V shapes view (view 3): the multi-head reshape with this model's numbers, and the
selected head's Q, K, V or output."""

from __future__ import annotations

import streamlit as st

from inference import view_specs as figs
from ui import downloads, presenter, specs
from ui.figures import plot
from ui.lacking import lacks
from ui.selection import Selection

QKV = {"q": "query Q", "k": "key K", "v": "value V", "head_out": "output (attn · V)"}


def shapes_options(sel: Selection) -> dict:
    """Which tensor of the selected head the heatmap shows."""
    which = st.radio(
        "Tensor of the selected head",
        list(QKV),
        horizontal=True,
        key="qkv_pick",
        format_func=QKV.get,
    )
    return {"tensor": which}


def shapes_view(sel: Selection) -> None:
    """View 3: the multi-head reshape with this model's numbers, and Q/K/V of one head."""
    name, result = sel.name, sel.result
    if lacks(sel, QKV, "The Q/K/V shapes view"):
        return
    # Full width: each box is one line of text and sizes itself to it; on a projector in
    # two columns, above a 1280×720 fold.
    columns = presenter.flow_columns()
    plot(specs.shown(figs.shape_flow, name, result, sel.layer, columns), key="shape_flow")
    which = sel.options["tensor"]
    plot(specs.shown(figs.qkv, name, result, sel.layer, sel.head, which), key="qkv")
    tensors = {n: result.outputs[n] for n in QKV}
    about = downloads.about(name, result, sel.layer, sel.head, "shapes", tensor=which)
    downloads.arrays("qkv", tensors, result.display_tokens, sel.layer, sel.head, about)
