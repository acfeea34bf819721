"""The four views of the translation page (``ui/translate.py``): each takes the words
as the models read them and the gold pair (or None outside the toy grammar)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from inference.seq2seq import inspect
from ui import link, presenter
from ui.figures import plot
from ui.notices import say
from ui.translation_loaders import card, decoding, translator
from viz import attention as va
from viz import fit, play
from viz import seq2seq as vs

ATTENDING = ("bahdanau", "transformer")
STEP_MODELS = (*ATTENDING, "gru")  # the steps view's model control, in this order
# The views' controls bound to the URL (key -> parameter), besides ``src`` and ``tview``
HEAD_KEYS = ("align", "steps", "self")


def _two_places(n: int) -> tuple:
    """Two places for two heatmaps of n labels across and the plot width to label them
    for: side by side while each still labels every word at a 1280 px window, else one
    above the other across the page."""
    if n <= fit.SIDE_BY_SIDE_MAX:
        return (*st.columns(2), fit.HALF_1280_PX)
    return st.container(), st.container(), fit.FULL_1280_PX


def _gold_overlay(gold) -> list[int] | None:
    """The gold alignment when known and asked for (a checkbox)."""
    if gold is None:
        return None
    shown = st.checkbox("Show the gold alignment", value=True, key="gold_overlay")
    return list(gold.alignment) if shown else None


def best_head() -> tuple[int, int]:
    """The transformer's cross-attention head whose attention falls most on the gold
    source word (the card's measurement): where every head picker opens."""
    best = card()["models"]["transformer"]["alignment"]["best_head"]
    return best["layer"], best["head"]


def _head(prefix: str) -> tuple[int, int]:
    """Layer and head pickers of the transformer, opening on :func:`best_head`, bound to
    the URL (``<prefix>_layer``, ``<prefix>_head``)."""
    cfg = translator("transformer").config
    default = best_head()
    c1, c2 = st.columns(2)
    layer = c1.selectbox("Layer", range(cfg.n_layer), index=default[0], key=f"{prefix}_layer",
                         bind="query-params")  # fmt: skip
    head = c2.selectbox("Head", range(cfg.n_head), index=default[1], key=f"{prefix}_head",
                        bind="query-params")  # fmt: skip
    return layer, head


def alignment_view(words: list[str], gold) -> None:
    """Target × source attention of Bahdanau's model and of one cross-attention head,
    on the model's own translation (free running), with the gold alignment overlaid."""
    overlay = _gold_overlay(gold)
    best = best_head()
    left, right, width = _two_places(len(words) + 1)
    with left:
        out = decoding("bahdanau", tuple(words), None, False)
        st.markdown("**GRU + Bahdanau attention**: query = the decoder's previous state")
        plot(vs.alignment(out.attention(), out.row_labels(), out.source, overlay,
                          width_px=width), key="align_bahdanau")  # fmt: skip
    with right:
        st.markdown(f"**Transformer cross-attention** (best head: L{best[0]} H{best[1]})")
        layer, head = _head("align")
        out = decoding("transformer", tuple(words), None, False)
        weights = out.attention()[layer, head]  # (T, S)
        plot(vs.alignment(weights, out.row_labels(), out.source, overlay, width_px=width),
             key="align_transformer")  # fmt: skip
    st.caption(
        "Row t is output word t, column j source word j; each row sums to 1. The open "
        "squares mark the source word each output word translates (particles: their "
        "noun). When a model's translation differs from the gold one, its rows and the "
        "gold squares can disagree."
    )


def steps_view(words: list[str], gold) -> None:
    """One decoding step: the query, the attention over the source, the context vector,
    the chosen word; teacher forcing beside free running."""
    # The options are the URL's values (a bound control writes its option's label into
    # the URL), so the labels are the keys and the models' names are captions.
    kind = st.radio("Model", STEP_MODELS, horizontal=True, key="steps_kind",
                    captions=[vs.KIND_NAMES[k] for k in STEP_MODELS],
                    bind="query-params")  # fmt: skip
    free = decoding(kind, tuple(words), tuple(gold.target) if gold else None, False)
    runs = [("free", "Free running: it reads its own previous word", free)]
    if gold is not None:
        forced = decoding(kind, tuple(words), tuple(gold.target), True)
        runs.insert(0, ("forced", "Teacher forcing: it reads the gold previous word", forced))
    longest = max(len(r.steps) for _, _, r in runs)
    if longest > 1 and (message := link.refused_number("steps_t", 0, longest - 1, "a position")):
        link.notice(message)
        link.rerun()  # the slider would seed from the run's first query string
    t = (
        st.slider("Output position t", 0, longest - 1, 0, key="steps_t", bind="query-params")
        if longest > 1
        else 0
    )
    layer, head = _head("steps") if kind == "transformer" else (0, 0)
    for col, (key, title, run) in zip(st.columns(len(runs)), runs, strict=True):
        with col:
            st.markdown(f"**{title}**")
            _one_step(run, t, kind, layer, head, key)
            _steps_table(run)
    if kind != "gru":
        with st.expander("▶ Play every step of the free run (in your browser)"):
            plot(_played(free, kind, layer, head), key="steps_play")


def _played(run, kind: str, layer: int, head: int) -> dict:
    """The run's attention over the source at every step, as plotly frames."""
    weights = np.stack([s.attention if kind != "transformer" else s.attention[layer, head]
                        for s in run.steps])  # (n, S)  # fmt: skip
    titles = [f"step {t}: reads {s.fed} → picks {s.word} ({s.prob:.0%})"
              for t, s in enumerate(run.steps)]  # fmt: skip
    return play.bar_steps(weights, run.source, titles)


def _one_step(run, t: int, kind: str, layer: int, head: int, key: str) -> None:
    if t >= len(run.steps):
        say("info", f"This run stopped after {len(run.steps)} steps.")
        return
    step = run.steps[t]
    mark = (
        "" if step.gold is None else (" ✓" if step.word == step.gold else f" ✗ (gold: {step.gold})")
    )
    st.markdown(f"reads **{step.fed}** → picks **{step.word}** ({step.prob:.1%}){mark}")
    weights = step.attention if kind != "transformer" else step.attention[layer, head]
    query = step.query if kind != "transformer" else step.query[layer, head]
    who = "the decoder's previous state" if kind != "transformer" else f"L{layer} H{head}'s query"
    plot(vs.context_vector(query, f"query: {who}"), key=f"step_query_{key}")
    if kind == "gru":
        st.caption("No attention: every step reads the same context vector.")
    else:
        plot(
            vs.step_attention(weights, run.source, "attention over the source"),
            key=f"step_attn_{key}",
        )
    if step.context is not None:
        plot(
            vs.context_vector(step.context, "context vector read at this step"),
            key=f"step_ctx_{key}",
        )


def _steps_table(run) -> None:
    rows = [{"t": i, "reads": s.fed, "picks": s.word, "p": round(s.prob, 3),
             "gold": s.gold or "", "ok": "" if s.gold is None else ("✓" if s.word == s.gold else "✗")}
            for i, s in enumerate(run.steps)]  # fmt: skip
    # every step in view (a decoding has at most MAX_LEN): the GRU's mistakes at t = 12-13
    # scrolled out of a ten-row table
    presenter.table(rows)


def self_view(words: list[str], gold) -> None:
    """The transformer's encoder self-attention (S × S) and decoder masked
    self-attention (T × T) of its own translation."""
    out = decoding("transformer", tuple(words), None, False)
    layer, head = _head("self")
    tensors = inspect(translator("transformer"), words, out.words)
    c1, c2, width = _two_places(max(len(out.source), len(out.words) + 1))
    with c1:
        enc = tensors["enc_self_attn"][layer, head]  # (S, S)
        title = f"encoder self-attention, L{layer} H{head}"
        plot(va.attention_heatmap(enc, out.source, title=title, width_px=width), key="enc_sa")
    with c2:
        dec = tensors["dec_self_attn"][layer, head]  # (T, T)
        title = f"decoder masked self-attention, L{layer} H{head}"
        plot(va.attention_heatmap(dec, ["<bos>", *out.words], title=title, width_px=width),
             key="dec_sa")  # fmt: skip
    st.caption(
        "Encoder: every source word looks at every source word. Decoder: each position "
        "looks only at the words already produced (the causal mask), the same mask as "
        "teacher forcing uses in training."
    )


def context_view(words: list[str], gold) -> None:
    """The no-attention model's one context vector, and accuracy against length."""
    out = decoding("gru", tuple(words), None, False)
    ctx = out.steps[0].context
    plot(vs.context_vector(ctx, f"the whole sentence in {len(ctx)} numbers"), key="gru_ctx")
    st.markdown(
        "The GRU without attention reads this one vector at every output step: the "
        "encoder's last state. Everything about the sentence must fit in it, so long "
        "sentences break first. Measured on held-out sentences:"
    )
    measured = card()
    scores = {}
    for kind, entry in measured["models"].items():
        scores[kind] = {**entry["heldout"]["by_length"], **entry["longer"]["by_length"]}
    plot(vs.accuracy_by_length(scores, measured["train_max_words"]), key="acc_len")
    first, last = out.steps[0].context, out.steps[-1].context
    st.caption(same_vector_note(first, last, len(out.steps)))


def same_vector_note(first: np.ndarray, last: np.ndarray, steps: int) -> str:
    """Whether the first and last steps read the same context vector, in words (#20
    item 10: a raw Python ``True`` was printed)."""
    if np.array_equal(first, last):
        return (
            f"The first and the last of the {steps} steps read the same vector: all "
            f"{first.size} numbers are identical."
        )
    diff = float(np.max(np.abs(first - last)))
    return f"The first and the last step read different vectors (largest difference {diff:.3g})."


RENDERERS = {"alignment": alignment_view, "steps": steps_view, "self-attention": self_view,
             "context": context_view}  # fmt: skip
