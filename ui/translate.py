"""The translation page: one English sentence through the three encoder-decoders of the
lesson (a GRU with a fixed context vector, the same with Bahdanau attention, a
transformer), their Tokan translations beside the gold one, and four views: the
alignment matrix, decoding step by step, the transformer's self-attention, and the
fixed context vector.

Cached loaders first (one set of graphs and one decoding per sentence for the whole
class), layout after. The sentence and the view live in the URL (``?src=…&tview=…``).
"""

from __future__ import annotations

import streamlit as st

from corpus.translation import OutsideGrammar, translate
from inference.seq2seq import read_source
from inference.translation_metrics import bleu
from models.seq2seq.config import SEQ2SEQ_KINDS
from ui import translate_views
from ui.text import plain
from ui.translation_loaders import decoding, translator
from viz.seq2seq import KIND_NAMES

EXAMPLES = [
    "the big dog saw a small cat .",
    "some old kings liked the red lamps near the park .",
    "this little girl found the heavy box behind some old gardens in the small market .",
]
# The keys are the control's labels and the URL's values (a bound widget writes its
# option's label into the URL); the names are its help.
VIEWS = {
    "alignment": "the alignment matrix",
    "steps": "decoding step by step",
    "self-attention": "encoder and decoder self-attention",
    "context": "the fixed context vector",
}


def _gold(words: list[str]):
    """The gold Pair of the toy grammar, or None with the reason on screen."""
    try:
        return translate(words)
    except OutsideGrammar as exc:
        st.info(
            f"No gold translation: this sentence is outside the toy grammar ({plain(exc)}). "
            "The models translate it all the same.",
            icon=":material/info:",
        )
        return None


def _read(text: str):
    """The sentence as the models read it, with every notice; None when empty."""
    source = read_source(translator("transformer"), text)
    for notice in source.notices:
        st.info(plain(notice))
    if source.unknown:
        parts = [f"“{plain(w)}”" + (f" (did you mean {plain(', '.join(c))}?)" if c else "")
                 for w, c in source.unknown.items()]  # fmt: skip
        st.warning(
            "Not in the toy lexicon, read as <unk>: " + "; ".join(parts),
            icon=":material/spellcheck:",
        )
    if not source.words:
        st.info("Type an English sentence, or pick an example.", icon=":material/edit:")
        return None
    return source


def translations(words: list[str], gold) -> None:
    """Each model's greedy translation beside the gold one, with exact match and BLEU."""
    rows = []
    for kind in SEQ2SEQ_KINDS:
        out = decoding(kind, tuple(words), None, False).words
        row = {"model": KIND_NAMES[kind], "translation": " ".join(out)}
        if gold is not None:
            row["exact"] = "✓" if out == list(gold.target) else "✗"
            row["BLEU"] = f"{bleu(out, list(gold.target)):.3f}"
        rows.append(row)
    if gold is not None:
        rows.append({"model": "gold (the rules)", "translation": " ".join(gold.target),
                     "exact": "", "BLEU": ""})  # fmt: skip
    st.dataframe(rows, hide_index=True, width="stretch")


def page() -> None:
    """Render the translation page."""
    st.title("Translate: English → Tokan")
    st.markdown(
        "Tokan is a toy language with fixed rules (`docs/toy_language.md`): the verb goes last, adjectives follow their noun, "
        "the determiner closes the noun phrase, a particle marks the subject (*ga*) and "
        "the object (*wo*), prepositions become postpositions. So the gold alignment of "
        "every word is known, and it crosses."
    )
    st.selectbox("Example sentences", EXAMPLES, index=None, placeholder="Pick an example…",
                 key="src_example", on_change=_use_example)  # fmt: skip
    st.session_state.setdefault("src", EXAMPLES[1])
    text = st.text_input("English sentence", key="src", bind="query-params")
    source = _read(text or "")
    if source is None:
        return
    gold = _gold(source.words)
    translations(source.words, gold)
    view = st.segmented_control(
        "View", list(VIEWS), default="alignment", key="tview", required=True,
        help=" · ".join(f"{k}: {v}" for k, v in VIEWS.items()), bind="query-params",
    )  # fmt: skip
    translate_views.RENDERERS[view or "alignment"](source.words, gold)


def _use_example() -> None:
    if st.session_state.get("src_example") in EXAMPLES:
        st.session_state["src"] = st.session_state["src_example"]
