"""Shareable state: sentence, model, layer, head and view live in the URL.

``?text=...&model=linear&layer=1&head=2&view=mask`` opens that exact view. The
URL is read once per browser session (before the widgets are drawn) and
rewritten after every run, using the same short keys as the widgets.
"""

from __future__ import annotations

import streamlit as st

URL_KEYS = ("text", "model", "layer", "head", "view")
MAX_URL_TEXT = 2_000


def _parse(key: str, raw: str):
    if key in ("layer", "head"):
        return int(raw) if raw.isdigit() and len(raw) < 4 else None
    if key == "text":
        return raw[:MAX_URL_TEXT]
    return raw


def restore_from_url() -> None:
    """Copy valid-looking URL parameters into session state, once per session.

    Values are checked again where they are used (unknown model or view names
    and out-of-range layers fall back to the defaults).
    """
    if st.session_state.get("_url_restored"):
        return
    st.session_state["_url_restored"] = True
    for key in URL_KEYS:
        raw = st.query_params.get(key)
        if raw is None:
            continue
        value = _parse(key, raw)
        if value is not None:
            st.session_state[key] = value


def clamp_choice(key: str, options: list, default=None) -> None:
    """Reset ``st.session_state[key]`` to ``default`` (or the first option) if invalid."""
    if st.session_state.get(key) not in options:
        st.session_state[key] = options[0] if default is None else default


def write_to_url() -> None:
    """Mirror the current widget values into the URL's query parameters."""
    params = {}
    for key in URL_KEYS:
        value = st.session_state.get(key)
        if value is not None and value != "":
            params[key] = str(value)[:MAX_URL_TEXT]
    if dict(st.query_params) != params:
        st.query_params.from_dict(params)
