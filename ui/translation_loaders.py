"""Cached loaders of the translation page: the shipped encoder-decoders opened once per
server, their model card, and one decoding per sentence shared by the whole class."""

from __future__ import annotations

import json

import streamlit as st

from inference.seq2seq import Decoding, load_translator, translate_text
from ui import loaders


@st.cache_resource(show_spinner="Loading the translation models…")
def translator(kind: str):
    """The shipped ``seq2seq_<kind>`` graphs, opened once per server."""
    return load_translator(loaders.models_dir(), kind)


@st.cache_data(show_spinner=False)
def card() -> dict:
    """``exported/seq2seq_card.json``: what ``training.evaluate_seq2seq`` measured."""
    return json.loads((loaders.models_dir() / "seq2seq_card.json").read_text())


@st.cache_resource(max_entries=64, show_spinner=False)
def decoding(
    kind: str, words: tuple[str, ...], gold: tuple[str, ...] | None, teacher: bool
) -> Decoding:
    """Greedy decoding of ``words`` (free running, or teacher forced on ``gold``), once
    per server for a sentence: shared between sessions, never modified. Through
    :func:`~inference.seq2seq.translate_text`, the path the card and the bench measure
    (``words`` are the page's reading of the text, so reading them again changes nothing)."""
    model, gold_words = translator(kind), list(gold) if gold else None
    return translate_text(model, " ".join(words), gold=gold_words, teacher=teacher).decoding
