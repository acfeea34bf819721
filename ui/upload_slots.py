"""This session's uploaded models: at most two (``upload``, ``upload2``: e.g. two
checkpoints of one run, compared side by side), each with its results, all in
``st.session_state`` (one browser session only, never shared with other students).

A second upload at most doubles what a session holds: its model (shared with other
sessions that uploaded the same files, ``upload.opened``) and its last analyses
(``ui.loaders.UPLOAD_ANALYSES`` a slot); the figures of both share one budget
(``ui.specs.UPLOAD_SPEC_BYTES``). The upload panel says the limit of two.
"""

from __future__ import annotations

import streamlit as st

from inference.runtime import OnnxModel
from ui import sentence_ids

UPLOAD_KEY = "uploaded_model"
# A session holds at most two uploads (two checkpoints of one run, compared side by side):
# model key -> where its model is kept in st.session_state.
UPLOAD_SLOTS = {"upload": UPLOAD_KEY, "upload2": "uploaded_model_2"}


def uploaded(name: str) -> OnnxModel | None:
    """This session's model in upload slot ``name`` (``upload``, ``upload2``), or None."""
    key = UPLOAD_SLOTS.get(name)
    return None if key is None else st.session_state.get(key)


UPLOAD_CACHE = "upload_cache"  # this session's results for its uploaded models


def upload_cache(name: str) -> dict:
    """This session's results of upload slot ``name`` (analyses, per-model values),
    emptied when another model is loaded into the slot (:func:`forget_upload`)."""
    return st.session_state.setdefault(UPLOAD_CACHE, {}).setdefault(name, {})


def forget_upload(name: str) -> None:
    """Drop what this session kept of upload slot ``name``: its results, its figures
    (``ui.specs`` keeps them by model key), the ids kept for it (``ui.sentence_ids``)."""
    mine = st.session_state.get(UPLOAD_CACHE, {})
    mine.pop(name, None)
    specs, sizes = mine.get("specs", {}), mine.get("spec_bytes", {})
    for key in [k for k in specs if k[1] == name]:
        specs.pop(key)
        sizes.pop(key, None)
    sentence_ids.forget_model(name)
