"""The sentence as token ids, kept for one model and one text in this session: "Use as
the sentence" after Generate (``ui.generation``) keeps the ids the model generated, so
every view analyses them (``ui.loaders.get_analysis``) rather than the text tokenized
again, which a BPE model can split otherwise (``inference.given_ids``).

Kept in ``st.session_state`` (this browser session only). The ids belong to one model key
and one text: another model reads the text with its own tokenizer, and a new sentence
typed in the box (:func:`forget_unless`) or a new upload into that model's slot
(:func:`forget_model`) lets them go.
"""

from __future__ import annotations

import streamlit as st

KEY = "_sentence_ids"  # (model key, text, ids)


def keep(name: str, text: str, ids: list[int]) -> None:
    """Analyse ``text`` on model ``name`` as ``ids`` (T,) from now on."""
    st.session_state[KEY] = (name, text, [int(i) for i in ids])


def given(name: str, text: str) -> list[int] | None:
    """The ids kept for model ``name`` and exactly this ``text``, else None."""
    kept = st.session_state.get(KEY)
    if kept is None or kept[0] != name or kept[1] != text:
        return None
    return list(kept[2])


def forget_unless(text: str) -> None:
    """Let the ids go when the sentence box holds another text (the user typed one)."""
    kept = st.session_state.get(KEY)
    if kept is not None and kept[1] != text:
        del st.session_state[KEY]


def forget_model(name: str) -> None:
    """Let the ids go when they were model ``name``'s (its upload was replaced)."""
    kept = st.session_state.get(KEY)
    if kept is not None and kept[0] == name:
        del st.session_state[KEY]
