"""Lesson "Why linear attention forgets": an associative-recall probe on the three
shipped models, their recall against the number of pairs (from the model card: the top
token over the whole vocabulary, and the ranking rule beside it; what each model was
trained with said), and the capacity argument of a d_head x d_head state
(``lessons.forgetting``)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from inference import behaviour, recall
from lessons.forgetting import capacity_curves, recall_table
from ui import link, loaders, presenter
from ui.figures import plot
from ui.lessons.check import check_yourself
from ui.recall_notes import card_recall, recall_caption, rows_max_pairs, trained_note
from ui.text import plain
from viz import forgetting as vf

INTRO = (
    "A linear-time model keeps one fixed-size state per head. Can it still remember which "
    "value went with which key? The test (Zoology, Arora et al. 2023): a sequence of n "
    "word pairs, *key value key value …*, then one of the keys again; the model should "
    "answer that key's value. Softmax attention looks back at every earlier token and "
    "finds the key. Linear attention must have kept the pair in its state S, which only "
    "ever *adds* k vᵀ: pairs pile on each other. The delta rule (DeltaNet) first *erases* "
    "what S held for the key, then writes. All three were trained with one recipe that "
    "includes rows in this test's format, so they practised it alike: what differs is "
    "the architecture (below, under the answers, what they were trained with)."
)
MAX_PAIRS = 31  # 2 n + 1 tokens within the shipped models' context of 64
MAX_EXAMPLE = 999  # the probe's examples: random seeds 1..999
# The first screen: at 8 pairs example 2 shows each model's usual outcome by the card's
# rule, the top token: softmax and delta right, linear wrong (by the ranking rule too;
# tests/ui/test_delta_views.py checks it).
DEFAULT_PAIRS = 8
DEFAULT_EXAMPLE = 2
BOUND = {"bind": "query-params"}
CAPACITY_PAIRS = [1, 2, 4, 8, 16, 32, 64, 128]
# Presenting: the answers' figure under the probe's sequence, whole above a 1280×720 fold
# (its toolbar's strip above it included, ui.chart.STRIP_PX).
ANSWERS_FOLD_PX = 460


@st.cache_data(max_entries=4, show_spinner=False)
def _capacity(d: int) -> dict:
    return capacity_curves(d, CAPACITY_PAIRS)


def _probe(n: int, example: int, intro: str | None = None) -> None:
    """One recall example of ``n`` pairs through the three shipped models, live; ``intro``
    (when presenting) goes first into the same "Notes" as the answers' caption."""
    models = {k: loaders.shipped_model(k) for k in loaders.SHIPPED_KINDS}
    first = next(iter(models.values()))
    vocab = first.tokenizer.get_vocab()
    words = behaviour.word_ids(vocab)
    ids, values, answer = recall.recall_example(words, n, np.random.default_rng(example))
    name_of = {i: t for t, i in vocab.items()}
    pairs = " · ".join(
        f"{name_of[k]} → {name_of[v]}" for k, v in zip(ids[0:-1:2], ids[1::2], strict=True)
    )
    st.markdown(
        f"**The sequence ({len(ids)} tokens):** {plain(pairs)} · then **{plain(name_of[ids[-1]])}** → ?"
    )
    rows = {k: recall_table(m.logits(ids)[-1], values, answer) for k, m in models.items()}
    if presenter.is_on():  # the answers beside the figure: both above a projector's fold
        answers, figure = st.columns([1, 3])
        cols = [answers] * len(rows)
    else:
        cols, figure = st.columns(len(rows)), st.container()
    for col, (kind, row) in zip(cols, rows.items(), strict=True):
        verdict = "right" if row["top_right"] else "wrong"
        col.metric(f"{kind} answers", plain(name_of[row["top"]]), verdict,
                   delta_color="green" if row["top_right"] else "red", delta_arrow="off")  # fmt: skip
        ranked = "right" if row["ranks_first"] else "wrong"
        col.caption(f"ranks **{plain(name_of[values[row['picked']]])}** first of the {n} "
                    f"values (ranking rule: {ranked})")  # fmt: skip
    words_shown = [name_of[v] for v in values]
    fig = vf.recall_answers(words_shown, {k: r["probs"] for k, r in rows.items()}, answer)
    with figure, presenter.above_fold(ANSWERS_FOLD_PX):
        plot(fig, key="forget_answers")
    with presenter.notes():
        if intro:
            st.markdown(intro)
        st.caption(
            f"The right answer is **{plain(name_of[values[answer]])}**. A model's answer is "
            "its top token over the whole vocabulary (the model card's rule): right or "
            "wrong above. The bars are the lenient ranking rule: probabilities among the n "
            "values of the sequence alone (a softmax over the model's logits of those n "
            "words), right when the right value has the highest, whatever the model would "
            "rather say. Computed now by the three shipped models. " + trained_note()
        )


def _check_link() -> None:
    """A link's pairs or example that is not one: dropped with one notice each, and the
    page run again without it (``link.refused_number``: Streamlit's number input would
    raise on ``recall_example=inf``)."""
    bounds = (("recall_pairs", MAX_PAIRS, "a number of pairs"),
              ("recall_example", MAX_EXAMPLE, "an example number"))  # fmt: skip
    refused = [m for key, hi, what in bounds if (m := link.refused_number(key, 1, hi, what))]
    for message in refused:
        link.notice(message)
    if refused:
        st.rerun()


def page() -> None:
    """Render the lesson."""
    st.title("Why linear attention forgets")
    if not presenter.is_on():
        st.markdown(INTRO)
    st.header("Try it: n pairs, then a key")
    _check_link()
    link.show_notices()
    c1, c2 = st.columns(2)
    n = int(c1.slider("Pairs n", 1, MAX_PAIRS, DEFAULT_PAIRS, key="recall_pairs", **BOUND))
    example = int(c2.number_input("Example", 1, MAX_EXAMPLE, DEFAULT_EXAMPLE, key="recall_example",
                                  **BOUND))  # fmt: skip
    _probe(n, example, INTRO if presenter.is_on() else None)  # presenting: folded in Notes
    check_yourself(
        "Before you move the slider: which model do you expect to fail first as n grows, and why?",
        "The linear model: its state sums every pair's φ(k)vᵀ, and with φ = elu + 1 every "
        "feature is positive, so no two φ(k) are orthogonal: the key's own value comes back "
        "mixed with every other pair's. Softmax can "
        "look back at the exact key; the delta rule replaces what its state held for a key.",
        "forget_predict",
    )
    st.header("Recall against n, for every model")
    measured = {k: v for k in loaders.SHIPPED_KINDS if (v := card_recall(k))}
    if measured:
        plot(vf.accuracy_by_pairs(measured, rows_max_pairs(measured)), key="forget_accuracy")
        st.caption(recall_caption(measured))
    st.header("Why: pairs pile up in one d × d state")
    d = loaders.shipped_model("linear").config.d_head
    st.latex(
        r"S = \sum_j k_j v_j^\top \;\Rightarrow\; S^\top k_q = v_q + "
        r"\underbrace{\sum_{j \ne q} (k_j^\top k_q)\, v_j}_{\text{other pairs leak in}}"
    )
    st.markdown(
        f"With unit keys, a read returns v_q exactly only if every other key is orthogonal "
        f"to k_q: even signed keys in a {d}-dimensional head allow at most {d} such pairs. "
        "Linear attention stores φ(k) with φ = elu + 1, whose features are all positive: "
        "no two φ(k) are orthogonal, so every pair leaks into every read. The delta rule "
        "S_t = S_(t−1) + β k_t (v_t − S_(t−1)ᵀk_t)ᵀ writes only the error, so a newer pair "
        "replaces what the state held for that key instead of piling on it."
    )
    plot(vf.capacity(_capacity(d)), key="forget_capacity")
    st.caption(
        f"Random unit keys and values in d = {d} dimensions (this head size), 20 draws per n, "
        "no φ and no normalizer: the storage rule alone. With random keys both leak before d; "
        "the delta rule's error stays below the additive sum's at every n. For linear "
        "attention the additive curve is an **optimistic bound**: random keys of either sign "
        "are nearly orthogonal, its all-positive φ(k) are not, and leak more."
    )
