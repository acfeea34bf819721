"""Lecture steps before the transformer: Nadaraya–Watson pooling and Bahdanau attention
in an encoder-decoder (d2l.ai 11.2 and 11.4), on the lesson's numerics and models."""

from __future__ import annotations

import numpy as np
import streamlit as st

from corpus.translation import translate
from lessons import nadaraya_watson as nw
from ui import presenter
from ui.figures import plot
from ui.lecture.step import Deeper
from ui.lessons.encoder_decoder import LONG
from ui.selection import Selection
from ui.translation_loaders import card, decoding
from viz import seq2seq as vs

QUERY_X = 2.5  # the query the regression figure marks
SLIDER_FOLD_PX = 480  # the figures' room under the kernel width slider, presenting


def nadaraya_watson(sel: Selection) -> Deeper:
    """Kernel regression on d2l's toy: the fit and the (query, key) weights."""
    width = st.select_slider(
        "Kernel width w", [0.05, 0.1, 0.2, 0.3, 0.5, 1.0, 2.0], value=0.3, key="lecture_nw"
    )
    x, y = nw.toy_data(50)  # (50,), (50,)
    grid = np.linspace(0, 5, 60)  # (60,)
    pred, weights = nw.predict(grid, x, y, width)  # (60,), (60, 50)
    c1, c2 = st.columns(2)
    # under the slider (89 px): presenting, the figures end above a 1280×720 fold
    with c1, presenter.above_fold(SLIDER_FOLD_PX):
        fig = vs.kernel_regression(x, y, grid, nw.true_function(grid), pred, query=QUERY_X)
        plot(fig, key="lecture_nw_fit")
    with c2, presenter.above_fold(SLIDER_FOLD_PX):
        plot(vs.kernel_weights(weights, grid, x), key="lecture_nw_weights")
    err = float(np.abs(pred - nw.true_function(grid)).mean())
    st.caption(f"Mean |f̂ − f| on the grid at w = {width:g}: {err:.3f}.")
    params = {"nw_width": f"{width:g}", "section": "3"}  # ui.lessons.encoder_decoder
    return Deeper(
        "encoder-decoder", f"The encoder-decoder lesson, step 3, at w = {width:g}", params
    )


def bahdanau(sel: Selection) -> Deeper:
    """The GRU + Bahdanau model's alignment on the lesson's long sentence, gold marked."""
    words, gold = LONG.split(), translate(LONG.split())
    out = decoding("bahdanau", tuple(words), None, False)
    fig = vs.alignment(out.attention(), out.words + ["<eos>"], out.source, list(gold.alignment))
    plot(fig, key="lecture_bahdanau")
    share = card()["models"]["bahdanau"]["alignment"]["gold_share"]
    st.caption(
        f"Rows: the Tokan words it wrote; columns: the English source. On held-out "
        f"sentences {share:.1%} of its attention falls on the gold source word (squares)."
    )
    return Deeper(
        "translate", "This sentence on the Translate page", {"src": LONG, "tview": "alignment"}
    )
