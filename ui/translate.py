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
from inference.seq2seq import MAX_LEN, read_source
from inference.translation_metrics import bleu
from models.seq2seq.config import SEQ2SEQ_KINDS
from ui import link, presenter, translate_views
from ui.notices import say
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


_LINK_READ, _FIXED_SRC = "_translate_link_read", "_translate_fixed_src"


def _allowed() -> dict[str, list[str]]:
    """URL parameter -> the values its bound control takes (a refused one gets a notice)."""
    cfg = translator("transformer").config
    out = {"tview": list(VIEWS), "steps_kind": list(translate_views.STEP_MODELS)}
    for prefix in translate_views.HEAD_KEYS:
        out[f"{prefix}_layer"] = [str(i) for i in range(cfg.n_layer)]
        out[f"{prefix}_head"] = [str(i) for i in range(cfg.n_head)]
    return out


def check_link() -> str | None:
    """On the session's first run of this page, before any bound control is drawn: one
    notice per refused link parameter (a bound control drops it without a word), and
    the link's ``src`` cleaned as the visualizer cleans its ``text`` (control characters
    to spaces, capped) in the URL; returns the cleaned sentence, or None."""
    if st.session_state.get(_LINK_READ):
        return None
    st.session_state[_LINK_READ] = True
    params = st.query_params
    for key, allowed in _allowed().items():
        if key in params and params[key] not in allowed:
            link.check(key, params[key], None, f"not one of {', '.join(allowed)}.")
    fixed = link.clean_text(params.get("src"), EXAMPLES[1])
    if fixed is not None:
        link.set_param_before_widget("src", fixed)
    return fixed


def _gold(words: list[str]):
    """The gold Pair of the toy grammar, or None with the reason on screen."""
    try:
        return translate(words)
    except OutsideGrammar as exc:
        say(
            "info",
            f"No gold translation: this sentence is outside the toy grammar ({exc}). "
            "The models translate it all the same.",
            icon=":material/info:",
        )
        return None


def _read(text: str):
    """The sentence as the models read it, with every notice; None when empty."""
    source = read_source(translator("transformer"), text)
    for notice in source.notices:
        say("info", notice)
    if source.unknown:
        parts = [f"“{w}”" + (f" (did you mean {', '.join(c)}?)" if c else "")
                 for w, c in source.unknown.items()]  # fmt: skip
        say(
            "warning",
            "Not in the toy lexicon, read as <unk>: " + "; ".join(parts),
            icon=":material/spellcheck:",
        )
    if not source.words:
        say("info", "Type an English sentence, or pick an example.", icon=":material/edit:")
        return None
    return source


def translations(words: list[str], gold) -> None:
    """Each model's greedy translation beside the gold one, with exact match and BLEU."""
    rows, unfinished = [], []
    for kind in SEQ2SEQ_KINDS:
        run = decoding(kind, tuple(words), None, False)
        out = run.words
        if not run.finished:
            unfinished.append(KIND_NAMES[kind])
        row = {"model": KIND_NAMES[kind], "translation": " ".join(out)}
        if gold is not None:
            row["exact"] = "✓" if out == list(gold.target) else "✗"
            row["BLEU"] = f"{bleu(out, list(gold.target)):.3f}"
        rows.append(row)
    if gold is not None:
        rows.append({"model": "gold (the rules)", "translation": " ".join(gold.target),
                     "exact": "", "BLEU": ""})  # fmt: skip
    presenter.table(rows)
    if unfinished:
        say(
            "info",
            f"{', '.join(unfinished)}: no end of sentence within {MAX_LEN} words, so the "
            "translation shown is cut there (the model kept writing; an everyday sentence "
            "outside the toy grammar often does this).",
            icon=":material/content_cut:",
        )


def page() -> None:
    """Render the translation page."""
    st.title("Translate: English → Tokan")
    fixed = check_link()
    link.show_notices()
    st.markdown(
        "Tokan is a toy language with fixed rules (`docs/toy_language.md`): the verb goes last, adjectives follow their noun, "
        "the determiner closes the noun phrase, a particle marks the subject (*ga*) and "
        "the object (*wo*), prepositions become postpositions. So the gold alignment of "
        "every word is known, and it crosses."
    )
    st.selectbox("Example sentences", EXAMPLES, index=None, placeholder="Pick an example…",
                 key="src_example", on_change=_use_example)  # fmt: skip
    if _FIXED_SRC in st.session_state:
        st.session_state["src"] = st.session_state.pop(_FIXED_SRC)
    st.session_state.setdefault("src", EXAMPLES[1])
    text = st.text_input("English sentence", key="src", bind="query-params")
    if fixed is not None:  # the box read the link's own value on this first run
        st.session_state[_FIXED_SRC] = fixed
        link.rerun()
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
