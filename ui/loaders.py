"""Cached loaders: one onnxruntime session set per model, analyses memoized per sentence.

Streamlit's demo-app pattern: resources are created once per server process with
``st.cache_resource``; everything else is computed on demand. Uploaded models
live in ``st.session_state`` (one browser session only) and are never cached
globally. The server operator's models (``ui/served.py``: ``make run MODEL=DIR``) are
there for every session like the shipped ones; their analyses are cached per server
too, bounded by bytes.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import streamlit as st

from inference.analysis import (
    LEAN_OUTPUTS,
    Analysis,
    analyze,
    behavioural_probe,
    induction_probe,
    positional_encoding,
    sentence_key,
    with_recurrent,
)
from inference.memory import release_freed
from inference.predictions import TokenTexts
from inference.runtime import OnnxModel, load_shipped
from inference.text_input import visible
from models.config import SHIPPED_KINDS
from ui import sentence_ids, served
from ui.shared import SharedCache
from ui.upload_slots import UPLOAD_CACHE as UPLOAD_CACHE
from ui.upload_slots import UPLOAD_KEY as UPLOAD_KEY
from ui.upload_slots import UPLOAD_SLOTS as UPLOAD_SLOTS
from ui.upload_slots import forget_upload as forget_upload
from ui.upload_slots import upload_cache, uploaded
from upload import memory
from upload.limits import SERVER_ANALYSIS_VALUES
from upload.sizes import largest_T

EXPORTED = Path(__file__).resolve().parents[1] / "exported"
MODELS_DIR_VARIABLE = "ATTNVIZ_MODELS_DIR"  # serve the shipped models from another folder


def models_dir() -> Path:
    """The folder the shipped models are served from: ``$ATTNVIZ_MODELS_DIR`` when set
    (the bench serves its own graphs this way), else ``exported/``."""
    return Path(os.environ.get(MODELS_DIR_VARIABLE) or EXPORTED)


@st.cache_resource(show_spinner="Loading the model…")
def shipped_model(kind: str) -> OnnxModel:
    """The shipped ``<models_dir()>/<kind>.*.onnx`` graphs, loaded once per server."""
    return load_shipped(models_dir(), kind)


@st.cache_resource(show_spinner=False)
def served_models() -> served.ServedModels:
    """The server operator's models (``--model DIR`` after ``--``, with ``--context N``
    if given), prepared once per server in a background thread: since the server
    started (``python -m ui.launch``, ``make run``), else since the first visit."""
    return served.shared(served.served_folders(), served.served_context())


def served_names() -> list[str]:
    """Keys of the operator's models that are ready now."""
    return served_models().ready()


def is_served(name: str) -> bool:
    """Whether ``name`` is one of the operator's models that is ready."""
    return name in served_names()


def is_shared(name: str) -> bool:
    """Whether ``name``'s results are kept for every session (shipped or served)."""
    return name in SHIPPED_KINDS or is_served(name)


def model_names() -> list[str]:
    """Shipped model keys, the operator's models that are ready, and ``upload`` (and
    ``upload2``) for this session's uploads."""
    names = [*SHIPPED_KINDS, *served_names()]
    return names + [name for name in UPLOAD_SLOTS if uploaded(name) is not None]


def server_model(name: str) -> OnnxModel:
    """A model every session shares: shipped or served (the first shipped model for
    any other key)."""
    if name not in SHIPPED_KINDS and (model := served_models().get(name)) is not None:
        return model
    return shipped_model(name if name in SHIPPED_KINDS else SHIPPED_KINDS[0])


def get_model(name: str) -> OnnxModel:
    """A model by key: ``softmax``, ``linear``, a served model's key, or ``upload`` /
    ``upload2`` (this session's)."""
    if (model := uploaded(name)) is not None:
        return model
    return server_model(name)


# Analyses of the shipped models, shared by every session, bounded by the bytes of their
# arrays: one of the linear model at T = 64 (a pasted paragraph) is about 5 MB (its
# recurrent form 4 MB more), of a classroom sentence (T ~ 12) 0.3-0.9 MB. Bounded by count
# (48 + 16), one student pasting paragraphs left the server 154 MB larger after they had
# gone; at 48 + 16 MB, with the figures' 16 MB (``ui.specs``), 135 MB; at 32 + 12 + 16 MB,
# 68 MB, and no more with three students after (issue #25: within 100 MB).
SHIPPED_ANALYSES_BYTES = served.megabytes("ATTNVIZ_SHIPPED_ANALYSES_MB", 32)
SHIPPED_RECURRENT_BYTES = served.megabytes("ATTNVIZ_SHIPPED_RECURRENT_MB", 12)


@st.cache_resource(show_spinner=False)
def _shipped_caches() -> dict[str, SharedCache]:
    """This server's analyses of the shipped models (``analyses``) and their recurrent
    forms (``recurrent``), by (model, sentence), within their bytes; the pages of what
    leaves are handed back (``inference.memory.release_freed``)."""
    return {
        kind: SharedCache(1024, max_bytes=budget, size=analysis_bytes, on_evict=release_freed)
        for kind, budget in (
            ("analyses", SHIPPED_ANALYSES_BYTES),
            ("recurrent", SHIPPED_RECURRENT_BYTES),
        )
    }


def _shipped_analysis(kind: str, text: str, ids: list[int] | None) -> Analysis:
    return _shipped_caches()["analyses"].get(
        _sentence(kind, text, ids), lambda: analyze(shipped_model(kind), text, False, ids=ids)
    )


def _sentence(name: str, text: str, ids: list[int] | None) -> tuple:
    """A cache's key of a sentence: the text, and the ids when they were handed in."""
    return (name, text) if ids is None else (name, text, tuple(ids))


def _shipped_recurrent(kind: str, result: Analysis) -> Analysis:
    return _shipped_caches()["recurrent"].get(
        (kind, sentence_key(result)), lambda: with_recurrent(shipped_model(kind), result)
    )


UPLOAD_ANALYSES = 2  # sentences whose analysis an upload's session keeps
TRIM_AFTER_BYTES = 16 * 2**20  # an upload's analysis this large: freed heap pages handed back


def analysis_bytes(result: Analysis) -> int:
    """Bytes of the arrays an Analysis holds (its outputs, probabilities, recurrent form)."""
    arrays = [*result.outputs.values(), result.probs, *(result.recurrent or {}).values()]
    return sum(a.nbytes for a in arrays)


@st.cache_resource(show_spinner=False)
def _served_analyses() -> SharedCache:
    """Analyses of the served models, per server, at most ``ANALYSIS_CACHE_BYTES``."""
    return SharedCache(
        1024,
        max_bytes=served.ANALYSIS_CACHE_BYTES,
        size=analysis_bytes,
        on_evict=lambda: release_freed(collect=True),
    )


def get_analysis(name: str, text: str) -> Analysis:
    """``analyze`` for a model key, without the recurrent form (see
    :func:`get_recurrent`); results are cached per sentence: across sessions for the
    shipped models, in this session (the last ``UPLOAD_ANALYSES`` of each) for an upload.
    The ids this session kept for the model and text (``ui.sentence_ids``: a generated
    continuation's) are analysed instead of the text's tokens.

    The returned Analysis may be shared with other sessions: never modify it.

    Raises:
        inference.text_input.EmptyInput: for text without tokens.
        inference.sessions.ModelRunError: if onnxruntime fails on this input.
    """
    ids = sentence_ids.given(name, text)
    if name in SHIPPED_KINDS:
        return _shipped_analysis(name, text, ids)
    if is_served(name):
        model = server_model(name)
        return _served_analyses().get(
            _sentence(name, text, ids), lambda: _served_analysis(model, text, ids)
        )
    model = get_model(name)
    limit = largest_T(model.config, SERVER_ANALYSIS_VALUES)
    return _kept(
        upload_cache(name),
        "analyses",
        _sentence(name, text, ids),
        lambda: analyze(model, text, recurrent=False, max_tokens=limit, ids=ids),
    )


def _served_analysis(model: OnnxModel, text: str, ids: list[int] | None = None) -> Analysis:
    """A served model's lean analysis (``LEAN_OUTPUTS``), then the pages of what computing
    it freed (onnxruntime's intermediate tensors, the logits) given back to the operating
    system (``inference.memory.release_freed``): at T = 1,024 they are gigabytes."""
    try:
        return analyze(model, text, recurrent=False, keep=LEAN_OUTPUTS, ids=ids)
    finally:
        release_freed()


def get_recurrent(name: str, result: Analysis) -> Analysis:
    """``result`` (this model's analysis of ``result.text``) with the linear model's
    recurrent form (``with_recurrent``: T runs of the step graph), which only the
    causal-mask view shows; cached like :func:`get_analysis`.

    Raises:
        inference.sessions.ModelRunError: if onnxruntime fails on the step graph.
    """
    if name in SHIPPED_KINDS:
        return _shipped_recurrent(name, result)
    if is_served(name):  # a served folder: softmax, no recurrent form (returned as it is)
        return with_recurrent(server_model(name), result)
    return _kept(upload_cache(name), "recurrent", sentence_key(result),
                 lambda: with_recurrent(get_model(name), result))  # fmt: skip


def _kept(cache: dict, kind: str, text, compute) -> Analysis:
    """``compute()`` kept in ``cache[kind]`` under ``text`` (a sentence's key), the last
    ``UPLOAD_ANALYSES``."""
    kept = cache.setdefault(kind, {})
    if text not in kept:
        result = compute()  # raises before anything is kept
        while len(kept) >= UPLOAD_ANALYSES:
            kept.pop(next(iter(kept)))
        kept[text] = result
        if analysis_bytes(result) > TRIM_AFTER_BYTES:  # onnxruntime's buffers, the old one
            memory.trim()
    return kept[text]


@st.cache_resource(max_entries=8, show_spinner=False)
def _shipped_pos_enc(kind: str) -> np.ndarray:
    return positional_encoding(server_model(kind))


def _per_model(name: str, shipped, compute):
    """``shipped(name)`` (cached per server) for a shipped or served model; for this
    session's upload, ``compute(model)`` once, kept in session state until the next
    upload."""
    if is_shared(name):
        return shipped(name)
    cache = upload_cache(name)
    model = get_model(name)
    key = (compute.__name__, model.name)
    if key not in cache:
        cache[key] = compute(model)
    return cache[key]


def get_pos_enc(name: str) -> np.ndarray:
    """``positional_encoding`` of a model key, computed once per model."""
    return _per_model(name, _shipped_pos_enc, positional_encoding)


@st.cache_data(max_entries=8, show_spinner=False)
def _shipped_induction(kind: str) -> np.ndarray:
    return induction_probe(server_model(kind))


def get_induction(name: str) -> np.ndarray:
    """Induction scores (L, H) of a model on a repeated random sequence."""
    return _per_model(name, _shipped_induction, induction_probe)


@st.cache_data(max_entries=8, show_spinner=False)
def _shipped_behavioural(kind: str) -> dict | None:
    return behavioural_probe(server_model(kind))


def get_behavioural(name: str) -> dict | None:
    """The whole model's behavioural induction score (``behavioural_probe``), once per model."""
    return _per_model(name, _shipped_behavioural, behavioural_probe)


def shown_vocab(model: OnnxModel) -> TokenTexts:
    """Every id's token as drawn (``inference.text_input.visible``: ␣, ⏎, ⇥, ``\\xNN``),
    each made when first read (:class:`inference.predictions.TokenTexts`)."""
    return TokenTexts(model, visible)


@st.cache_resource(max_entries=8, show_spinner=False)
def _shipped_vocab(kind: str) -> list[str]:
    return shown_vocab(server_model(kind))


def get_vocab(name: str) -> Sequence[str]:
    """Token string of every id (index = id) of a model as drawn (whitespace and control
    characters visible), computed once per model.

    Shared with other sessions for a shipped model: never modify it.
    """
    return _per_model(name, _shipped_vocab, shown_vocab)
