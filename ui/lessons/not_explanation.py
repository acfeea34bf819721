"""Lesson "Attention is not explanation" (Jain & Wallace 2019; Wiegreffe & Pinter 2019):
a head whose attention looks striking but whose removal barely matters, beside one whose
attention looks plain but whose removal costs the model most, found in the sidebar's model
by measuring every head (``inference/lab.py``: sharpness of the pattern, mean-ablation
loss on validation text)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from corpus.heldout import validation_lines
from inference import lab
from inference import view_specs as figs
from ui import lab_loaders, loaders, presenter, specs
from ui.figures import plot
from ui.lab_view import has_lab
from ui.lessons.common import start
from ui.selection import Selection

INTRO = (
    "A head's attention pattern says where it *looks*. Does the model *need* what it finds "
    "there? Jain & Wallace (2019) showed that attention weights can be changed a lot with "
    "little change in a model's output; Wiegreffe & Pinter (2019) answered that it depends "
    "on the model and the test. Here is the test, on this model: every head is knocked out "
    "(mean-ablation) on validation text, and the loss it costs is set against how striking "
    "its pattern is."
)
ROWS, ROW_T = 8, 32  # validation text: 8 rows of 32 tokens


@st.cache_data(max_entries=8, show_spinner="Knocking out every head on validation text…")
def _shipped_measure(kind: str) -> tuple[np.ndarray, np.ndarray]:
    return measure(loaders.server_model(kind))


def measure(model) -> tuple[np.ndarray, np.ndarray]:
    """(sharpness (L, H), loss increase (L, H) in nats) over ``ROWS`` rows of validation
    text, mean-ablation."""
    T = min(ROW_T, model.config.context_length)
    rows = lab.validation_chunks(model.tokenizer, validation_lines(), T, ROWS * T)
    means = lab_loaders.mean_outputs(model)
    sharp = np.mean([lab.sharpness(model.inspect([int(i) for i in r], ("attn",))["attn"])
                     for r in rows], axis=0)  # fmt: skip
    effect = np.mean([lab.importance_grid(model, [int(i) for i in r], "mean", means)
                      for r in rows], axis=0)  # fmt: skip
    return sharp, effect


def page(sel: Selection) -> None:
    """The two heads side by side on the sidebar's sentence, and every head's two numbers."""
    sel = start(sel, "Attention is not explanation", INTRO)
    if sel is None or not has_lab(sel):
        return
    sharp, effect = loaders._per_model(sel.name, _shipped_measure, measure)
    quiet, plain = lab.looks_and_does(sharp, effect)
    cols = st.columns(2) if not presenter.is_on() else [st.container(), st.container()]
    for col, (layer, head), what in ((cols[0], quiet, "looks striking, matters little"),
                                     (cols[1], plain, "looks plain, matters most")):  # fmt: skip
        with col:
            st.markdown(f"**L{layer} H{head}: {what}**")
            plot(specs.shown(figs.compare, sel.name, sel.result, layer, head),
                 key=f"nx_{layer}_{head}")  # fmt: skip
            st.caption(f"Sharpness {sharp[layer, head]:.2f} (the largest share one key takes, "
                       f"mean over queries); knocked out, the loss changes by "
                       f"{effect[layer, head]:+.3f} nats.")  # fmt: skip
    rows = [{"head": f"L{i // sharp.shape[1]} H{i % sharp.shape[1]}", "sharpness": float(s),
             "Δ loss (nats)": float(e)} for i, (s, e) in
            enumerate(zip(sharp.reshape(-1), effect.reshape(-1), strict=True))]  # fmt: skip
    with presenter.notes():
        st.caption(f"Every head, on {ROWS} rows of {ROW_T} tokens of validation text. The "
                   "pattern is the correlation; the knock-out is the experiment. A head can "
                   "look sharp because it parks its attention on one token (often the "
                   "first) and write little that is used; a diffuse head can carry what the "
                   "next layer needs.")  # fmt: skip
    presenter.table(rows, height="content" if len(rows) <= 48 else 900)
