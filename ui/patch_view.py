"""The Activation patching view (Wang et al. 2022): a clean and a corrupted sentence of the
same length, the logit difference of two answers, and how much of it each head's output
and each residual cell carries (``inference/patching.py``).

URL state: ``clean``, ``corrupted``, ``answer``, ``wrong``, ``direction``.
"""

from __future__ import annotations

import streamlit as st

from inference import lab, patching
from inference.text_input import visible
from models.tokenizer import encode
from ui import downloads, presenter
from ui.figures import plot
from ui.lab_view import has_lab
from ui.notices import say
from ui.selection import Selection
from viz import lab as figs

DIRECTION_HELP = ("denoise: run the corrupted sentence with one piece taken from the clean "
                  "run (is it enough to restore the answer?). noise: run the clean sentence "
                  "with one piece from the corrupted run (is it needed?).")  # fmt: skip


def patch_options(sel: Selection) -> dict:
    """The two sentences, the two answers and the direction, each bound to the URL (none
    for a model without a lab graph: the view says why)."""
    if not getattr(sel.model, "has_lab", False):
        return {}
    clean, corrupted, correct, wrong = patching.default_pair(sel.model.tokenizer)
    for key, default in (("clean", clean), ("corrupted", corrupted), ("answer", correct),
                         ("wrong", wrong)):  # fmt: skip
        st.session_state.setdefault(key, st.query_params.get(key, default))
    left, right = st.columns(2)
    texts = {"clean": left.text_input("Clean sentence", key="clean", bind="query-params"),
             "corrupted": right.text_input("Corrupted sentence (same length)", key="corrupted",
                                           bind="query-params")}  # fmt: skip
    a, b, c = st.columns(3)
    texts["answer"] = a.text_input("Answer in the clean run", key="answer", bind="query-params")
    texts["wrong"] = b.text_input("Answer in the corrupted run", key="wrong", bind="query-params")
    direction = c.segmented_control("Direction", patching.DIRECTIONS, default="denoise",
                                    key="direction", required=True, bind="query-params",
                                    help=DIRECTION_HELP)  # fmt: skip
    return {**texts, "direction": direction or "denoise"}


def _ids(sel: Selection, text: str, what: str) -> list[int] | None:
    """``text``'s token ids as the app reads a sentence, or None (with one line) when this
    model's tokenizer cannot read it (a word-level vocabulary without an unknown token)."""
    try:
        return encode(sel.model.tokenizer, text).ids
    except Exception:  # noqa: BLE001 - the tokenizers library's own error
        say("warning", f"This model's tokenizer cannot read the {what} “{visible(text)}”: "
            "type words in its vocabulary.")  # fmt: skip
        return None


def answer_token(sel: Selection, word: str, what: str) -> int | None:
    """The token id an answer is scored by: the word as one token (with a leading space
    first, as a byte-level BPE writes a word after another), else its first token, said in
    one line; None (and a line) for an empty answer or one the tokenizer cannot read."""
    tok, word = sel.model.tokenizer, word.strip()
    ids = _ids(sel, word, what)
    if ids is None:
        return None
    if not ids:
        say("warning", f"Type the {what}: one word.")
        return None
    try:
        spaced = encode(tok, f" {word}").ids
    except Exception:  # noqa: BLE001 - only the plain form is read then
        spaced = []
    for form in (spaced, ids):
        if len(form) == 1:
            return form[0]
    say("caption", f"The {what} “{visible(word)}” is {len(ids)} tokens for this model: the "
        f"metric uses its first, “{visible(tok.id_to_token(ids[0]) or '')}”.")  # fmt: skip
    return ids[0]


def patch_view(sel: Selection) -> None:
    """The metric of both runs, the head grid and the residual grid."""
    if not has_lab(sel):
        return
    o, tok = sel.options, sel.model.tokenizer
    clean = _ids(sel, o["clean"], "clean sentence")
    corrupted = _ids(sel, o["corrupted"], "corrupted sentence")
    if clean is None or corrupted is None:
        return
    correct = answer_token(sel, o["answer"], "answer")
    wrong = answer_token(sel, o["wrong"], "answer in the corrupted run")
    if correct is None or wrong is None:
        return
    if len(clean) != len(corrupted) or not clean:
        say("warning", f"The clean sentence is {len(clean)} tokens and the corrupted one "
            f"{len(corrupted)}: patching swaps pieces position by position, so they must be "
            "the same length (and not empty).")  # fmt: skip
        return
    if line := lab.too_long(sel.model.config, len(clean)):
        say("warning", line)
        return
    if len(clean) > sel.model.config.context_length:
        say("warning", f"The sentences are {len(clean)} tokens, longer than the model's "
            f"context of {sel.model.config.context_length}.")  # fmt: skip
        return
    args = (sel.model, clean, corrupted, correct, wrong, o["direction"])
    heads, resid = patching.patch_heads(*args), patching.patch_residual(*args)
    st.markdown(f"Metric: logit(“{visible(o['answer'])}”) − logit(“{visible(o['wrong'])}”) at "
                f"the last position: **{heads.clean:+.2f}** on the clean sentence, "
                f"**{heads.corrupted:+.2f}** on the corrupted one. Each cell below: the "
                f"patched run's metric on that scale, 0 = corrupted, 1 = clean.")  # fmt: skip
    layer, head = heads.largest()
    say("caption", f"Largest effect among the heads: L{layer} H{head} "
        f"({heads.grid[layer, head]:.2f}).")  # fmt: skip
    with presenter.above_fold(420):
        plot(figs.head_grid(heads.grid, f"Each head's output patched ({o['direction']})",
                            "0 corrupted · 1 clean", [(layer, head)]), key="patch_heads")  # fmt: skip
    base = o["corrupted"] if o["direction"] == "denoise" else o["clean"]
    tokens = [visible(t) for t in encode(tok, base).tokens]
    L = sel.model.config.n_layer
    rows = [f"into block {i}" for i in range(L)] + ["after the last"]
    plot(figs.position_grid(resid.grid, tokens, "Each residual cell patched (layer × position)",
                            "0 corrupted · 1 clean", signed=True, rows=rows), key="patch_resid")  # fmt: skip
    about = {"model": sel.name, "view": "patch", "clean": o["clean"], "corrupted": o["corrupted"],
             "clean_ids": clean, "corrupted_ids": corrupted, "tokens": tokens,
             "answer": o["answer"], "answer_id": correct, "wrong": o["wrong"], "wrong_id": wrong,
             "direction": o["direction"], "metric_clean": heads.clean,
             "metric_corrupted": heads.corrupted, "scale": "0 corrupted, 1 clean",
             "axes": {"heads": ("layer", "head"),
                      "residual": ("boundary (into block i; last: after the last)",
                                   "position")}}  # fmt: skip
    downloads.arrays("patching", {"heads": heads.grid, "residual": resid.grid}, None,
                     manifest=about)  # fmt: skip
