"""Lesson "From encoder-decoder to transformer": the path of d2l.ai's chapters 10-11 on
live numbers. A fixed context vector, machine translation and BLEU, attention as kernel
regression (Nadaraya-Watson), scoring functions, seq2seq with attention, then the
transformer; every step runs the shipped translation models or a numpy toy."""

from __future__ import annotations

import json

import numpy as np
import streamlit as st

from corpus.translation import translate
from inference.translation_metrics import bleu
from lessons import nadaraya_watson as nw
from ui import presenter
from ui.figures import plot
from ui.navigation import link
from ui.translation_loaders import card, decoding
from viz import seq2seq as vs

# A link's ``nw_width`` (the kernel width slider's values, as the URL writes them) and
# ``section`` (the step it opens at: ``ui.navigation.adopt_link_state`` adopts both).
WIDTHS = {f"{w:g}": w for w in (round(0.05 * i, 2) for i in range(1, 41))}
SECTIONS = {"3": "kernel-regression"}
SECTION_KEY = "section"
SHORT = "the dog saw a cat ."
LONG = (
    "the husbands found the purple little rabbit near the little kitchen under the large markets ."
)


def _fixed_context() -> None:
    st.header("1. An encoder-decoder with a fixed context vector")
    st.markdown(
        "An RNN **encoder** reads the source word by word; its last hidden state, the "
        "**context vector** c, is all the **decoder** gets: it writes the translation one "
        "word at a time. Sutskever et al. (2014) give c to the decoder only as its initial "
        "state; Cho et al. (2014) also feed c at every step, each step reading [previous "
        "word; c]. Our GRU model does as Cho et al.: it starts from c and reads it at "
        "every step. On a short and on a long sentence:"
    )
    for text in (SHORT, LONG):
        words, gold = text.split(), translate(text.split())
        out = decoding("gru", tuple(words), None, False).words
        ok = "✓" if out == list(gold.target) else "✗"
        st.markdown(f"- *{text}* → **{' '.join(out)}** {ok}  \n  gold: {' '.join(gold.target)}")


def _bleu() -> None:
    st.header("2. Machine translation and its BLEU score")
    st.latex(
        r"\mathrm{BLEU} = \exp\Big(\min\big(0, 1 - \tfrac{\mathrm{len}_{\text{label}}}"
        r"{\mathrm{len}_{\text{pred}}}\big)\Big) \prod_{n=1}^{k} p_n^{1/2^n}"
    )
    words, gold = LONG.split(), translate(LONG.split())
    out = decoding("gru", tuple(words), None, False).words
    st.markdown(
        f"p_n is the share of the prediction's n-grams found in the label (d2l.ai 10.7.6). "
        f"The GRU's translation of the long sentence scores **{bleu(out, list(gold.target)):.3f}** "
        "against the gold one. Measured on 500 held-out sentences:"
    )
    models = card()["models"]
    presenter.table(
        [{"model": vs.KIND_NAMES[k], "exact match": f"{m['heldout']['exact_match']:.1%}",
          "BLEU": round(m["heldout"]["bleu"], 3),
          "longer than training: exact": f"{m['longer']['exact_match']:.1%}"}
         for k, m in models.items()],
    )  # fmt: skip


def _kernel_regression() -> None:
    st.header("3. Attention as kernel regression (Nadaraya–Watson)", anchor=SECTIONS["3"])
    _scroll_here(SECTIONS["3"])
    st.latex(
        r"f(x) = \sum_i \alpha(x, x_i)\, y_i,\qquad "
        r"\alpha(x, x_i) = \frac{K(x - x_i)}{\sum_j K(x - x_j)},\quad K(u) = e^{-u^2 / 2w^2}"
    )
    width = st.slider("Kernel width w", 0.05, 2.0, 0.3, 0.05, key="nw_width")
    x, y = nw.toy_data(50)
    grid = np.linspace(0, 5, 60)
    pred, weights = nw.predict(grid, x, y, width)
    c1, c2 = st.columns(2)
    with c1:
        plot(vs.kernel_regression(x, y, grid, nw.true_function(grid), pred), key="nw_fit")
    with c2:
        plot(vs.kernel_weights(weights, grid, x), key="nw_weights")
    err = np.abs(pred - nw.true_function(grid)).mean()
    st.caption(
        f"The query x, keys x_i, values y_i of attention, with nothing learned. Mean "
        f"|f̂ − f| on the grid: {err:.3f}. A narrow kernel copies the nearest point "
        "(noisy); a wide one averages everything (flat)."
    )


def _scroll_here(anchor: str) -> None:
    """Once, after a link that opens this step (``?section=3``): scroll the browser to
    its header (again as the formulas above it settle, which moves it)."""
    if st.session_state.get(SECTION_KEY) != anchor:  # the link's section, adopted
        return
    del st.session_state[SECTION_KEY]
    target = json.dumps(anchor)
    st.html(
        "<script>for (const ms of [0, 300, 1000]) setTimeout(() => "
        f"document.getElementById({target})?.scrollIntoView({{block: 'start'}}), ms);</script>",
        unsafe_allow_javascript=True,
        width="content",
    )


def _scoring_and_attention() -> None:
    st.header("4. Scoring functions")
    st.markdown(
        "Learned scores replace the fixed kernel: **additive** a(q, k) = w_vᵀ tanh(W_q q + "
        "W_k k) (Bahdanau et al. 2015) or **scaled dot product** qᵀk/√d."
    )
    link("scoring", "Scoring functions, on the model's own q and k", ":material/functions:")
    st.header("5. Seq2seq with attention")
    words, gold = LONG.split(), translate(LONG.split())
    out = decoding("bahdanau", tuple(words), None, False)
    st.markdown(
        "The query is the decoder's previous state, the keys and values are the encoder's "
        "outputs: each output word gets its own context vector. The bottleneck is gone:"
    )
    plot(vs.alignment(out.attention(), out.row_labels(), out.source, list(gold.alignment)),
         key="lesson_align")  # fmt: skip
    measured = card()["models"]["bahdanau"]["alignment"]
    roles = measured["by_role"]
    st.caption(
        f"On held-out sentences {measured['gold_share']:.1%} of its attention falls on the "
        f"gold source word: {roles['noun']:.0%} for nouns, {roles['verb']:.0%} for verbs, "
        f"{roles['particle']:.0%} for the case particles, whose gold word (the head noun) is a "
        "convention of ours: the model looks elsewhere for them."
    )


def _transformer() -> None:
    st.header("6. Self-attention, positions, heads: the transformer")
    st.markdown(
        "Let every word attend to every word of the same sentence (**self-attention**), "
        "add **positional encoding** (attention itself ignores order), run several "
        "**heads** side by side, and stack layers: the transformer's encoder. Its decoder "
        "masks future words and adds **cross-attention** to the encoder's output."
    )
    link("visualizer", "Q/K/V shapes and positional encoding in the visualizer",
         ":material/visibility:")  # fmt: skip
    link("translate", "Every view of the three translation models", ":material/translate:")
    measured = card()
    scores = {k: {**m["heldout"]["by_length"], **m["longer"]["by_length"]}
              for k, m in measured["models"].items()}  # fmt: skip
    plot(vs.accuracy_by_length(scores, measured["train_max_words"]), key="lesson_acc_len")
    st.caption(
        "All three on the same held-out sentences. Right of the dashed line no sentence "
        "was this long in training."
    )


def page() -> None:
    """Render the lesson."""
    st.title("From encoder-decoder to transformer")
    st.markdown(
        "One path, after d2l.ai chapters 10–11: each step on live numbers from three "
        "models trained side by side on one toy translation task (English → Tokan)."
    )
    for part in (_fixed_context, _bleu, _kernel_regression, _scoring_and_attention, _transformer):
        part()
