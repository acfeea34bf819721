"""Shareable state: sentence, model, layer, head and view live in the URL.

``?text=...&model=linear&layer=1&head=2&view=mask`` opens that exact view. The
URL is read once per browser session (before the widgets are drawn) and
rewritten after every run, using the same short keys as the widgets.

A link is user input: ``layer`` and ``head`` must be ASCII numbers of the model
in use, ``model`` and ``view`` one of their known names, ``text`` at most
``MAX_URL_TEXT`` characters without control characters (newline and tab stay).
Anything else is ignored, with one notice line naming the parameter.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

import streamlit as st

from ui.text import plain

URL_KEYS = ("text", "model", "layer", "head", "view")
MAX_URL_TEXT = 2_000
QUOTE_CHARS = 24  # a refused value is quoted up to this many characters
_NUMBER = re.compile(r"[0-9]{1,3}")  # str.isdigit() also admits "²", "①", "٣", "１"
_RESTORED, _NUMBERS, _NOTICES = "_url_restored", "_url_numbers", "_url_notices"


def _visible(ch: str) -> str:
    """``ch`` itself, or its escape (``\\x00``, ``\\u200b``) if it is invisible."""
    if unicodedata.category(ch).startswith("C"):
        return ch.encode("unicode_escape").decode("ascii")
    return ch


def quoted(raw: str) -> str:
    """``raw`` as a notice quotes it: invisible characters as escapes, long values cut."""
    head = "".join(_visible(ch) for ch in raw[:QUOTE_CHARS])
    return head if len(raw) <= QUOTE_CHARS else f"{head}… ({len(raw):,} characters)"


def _ignored(key: str, raw: str, why: str) -> None:
    """Queue the notice for one refused parameter (shown by ``show_notices``)."""
    message = f"Ignored the link's {plain(f'{key}={quoted(raw)}')}: {why}"
    st.session_state.setdefault(_NOTICES, []).append(message)


def _unwanted(ch: str) -> bool:
    """Control characters other than newline and tab."""
    return unicodedata.category(ch) == "Cc" and ch not in "\n\t"


def parse_text(raw: str) -> tuple[str | None, str | None]:
    """The link's sentence, capped and without control characters; (text, notice).

    ``text`` is ``None`` when nothing visible is left. The one notice line names
    every change (the cap, the removed characters); nothing else is altered.
    """
    changes = []
    if len(raw) > MAX_URL_TEXT:
        changes.append(f"cut to its first {MAX_URL_TEXT:,} of {len(raw):,} characters")
        raw = raw[:MAX_URL_TEXT]
    removed = [ch for ch in raw if _unwanted(ch)]
    if removed:
        kinds = ", ".join(dict.fromkeys(quoted(ch) for ch in removed))
        changes.append(f"stripped of {len(removed)} control character(s) ({plain(kinds)})")
        raw = "".join(ch for ch in raw if not _unwanted(ch))
    if not raw.strip():
        return None, None
    return raw, f"The link's text was {' and '.join(changes)}." if changes else None


def restore_from_url(models: Sequence[str], views: Sequence[str]) -> None:
    """Copy the link's valid parameters into session state, once per session.

    Args:
        models: model keys a link may name (the shipped ones).
        views: view keys a link may name.

    ``layer`` and ``head`` wait for ``apply_url_numbers``, which knows the model.
    """
    if st.session_state.get(_RESTORED):
        return
    st.session_state[_RESTORED] = True
    known = {"model": list(models), "view": list(views)}
    for key in URL_KEYS:
        raw = st.query_params.get(key)
        if raw is None:
            continue
        if key == "text":
            text, notice = parse_text(raw)
            if text is None:
                _ignored(key, raw, "there is no visible text in it.")
            else:
                st.session_state[key] = text
                if notice:
                    st.session_state.setdefault(_NOTICES, []).append(notice)
        elif key in known:
            if raw in known[key]:
                st.session_state[key] = raw
            else:
                _ignored(key, raw, f"not one of {', '.join(known[key])}.")
        else:
            st.session_state.setdefault(_NUMBERS, {})[key] = raw


def apply_url_numbers(n_layer: int, n_head: int) -> None:
    """Use the link's ``layer`` and ``head`` if they are numbers of this model.

    Call it once the model is known and before the layer/head pickers are drawn.
    """
    pending = st.session_state.pop(_NUMBERS, {})
    for key, count in (("layer", n_layer), ("head", n_head)):
        raw = pending.get(key)
        if raw is None:
            continue
        if _NUMBER.fullmatch(raw) and int(raw) < count:
            st.session_state[key] = int(raw)
        else:
            _ignored(key, raw, f"not a {key} number of this model (0–{count - 1}).")


def show_notices() -> None:
    """One warning line per refused or changed link parameter, on the run that read it."""
    for message in st.session_state.pop(_NOTICES, []):
        st.warning(message, icon=":material/link_off:")


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
