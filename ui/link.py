"""A shared link is user input: what it asked for, and one notice per refused value.

``?text=...&model=linear&layer=1&head=2&view=mask`` opens that exact view. The
widgets themselves are bound to these parameters (``bind="query-params"``,
Streamlit 1.67): they take a valid value from the URL on the session's first run
and write every change back, and they drop an invalid one (``layer=²``,
``model=gpt5``) from the URL without a word. This module reads the link once, on
the session's first run with the shared sidebar and before any bound widget is
drawn, so that the page can say what it ignored, one line per parameter.

``layer`` and ``head`` must be ASCII numbers of the model in use, ``model`` and
``view`` one of their known names, ``text`` at most ``MAX_URL_TEXT`` characters
without control characters (newline and tab stay; any other becomes a space, so
"hi\x07there" reads "hi there"); a ``text`` that needs cleaning is replaced by its
cleaned form (:func:`clean_text`), in the box and in the URL. A number bound to the URL
elsewhere (a lesson's slider, the translation steps' position) must be a whole number in
its widget's range, in ASCII digits (:func:`refused_number`): Streamlit's own binding
takes ``inf`` or ``1e309`` for a number input and raises.
"""

from __future__ import annotations

import re
import unicodedata

import streamlit as st

from ui import rerun_gate
from ui.notices import say

URL_KEYS = ("text", "model", "layer", "head", "view")
MAX_URL_TEXT = 2_000
QUOTE_CHARS = 24  # a refused value is quoted up to this many characters
_READ, _NOTICES, _SHOWN = "_link_unchecked", "_link_notices", "_link_shown"


def _visible(ch: str) -> str:
    """``ch`` itself, or its escape (``\\x00``, ``\\u200b``) if it is invisible."""
    if unicodedata.category(ch).startswith("C"):
        return ch.encode("unicode_escape").decode("ascii")
    return ch


def quoted(raw: str) -> str:
    """``raw`` as a notice quotes it: invisible characters as escapes, long values cut."""
    head = "".join(_visible(ch) for ch in raw[:QUOTE_CHARS])
    return head if len(raw) <= QUOTE_CHARS else f"{head}… ({len(raw):,} characters)"


def notice(message: str) -> None:
    """Queue one notice line for :func:`show_notices` (once)."""
    queued = st.session_state.setdefault(_NOTICES, [])
    if message not in queued:
        queued.append(message)


def _unwanted(ch: str) -> bool:
    """Control characters other than newline and tab."""
    return unicodedata.category(ch) == "Cc" and ch not in "\n\t"


def _spaced(text: str) -> str:
    """Each run of control characters replaced by one space, or dropped where a
    neighbour is already whitespace or it starts or ends the text (no word is glued
    to the next, no space doubled)."""
    out, i = [], 0
    while i < len(text):
        if not _unwanted(text[i]):
            out.append(text[i])
            i += 1
            continue
        j = i
        while j < len(text) and _unwanted(text[j]):
            j += 1
        before, after = (out[-1] if out else ""), (text[j] if j < len(text) else "")
        if before and after and not before.isspace() and not after.isspace():
            out.append(" ")
        i = j
    return "".join(out)


def parse_text(raw: str) -> tuple[str | None, str | None]:
    """The link's sentence, capped and without control characters; (text, notice).

    ``text`` is ``None`` when nothing visible is left. The one notice line names
    every change (the cap, the control characters replaced by a space: see
    :func:`_spaced`); nothing else is altered.
    """
    changes = []
    if len(raw) > MAX_URL_TEXT:
        changes.append(f"cut to its first {MAX_URL_TEXT:,} of {len(raw):,} characters")
        raw = raw[:MAX_URL_TEXT]
    removed = [ch for ch in raw if _unwanted(ch)]
    if removed:
        kinds = ", ".join(dict.fromkeys(quoted(ch) for ch in removed))
        changes.append(
            f"stripped of {len(removed)} control character(s) ({kinds}), "
            "each run replaced by a space between words"
        )
        raw = _spaced(raw)
    if not raw.strip():
        return None, None
    return raw, f"The link's text was {' and '.join(changes)}." if changes else None


def unchecked() -> dict[str, str]:
    """The link's parameters not checked yet: read from ``st.query_params`` on the
    session's first run with the shared sidebar, then popped one by one as each
    bound widget is drawn and checked (``view``: by the visualizer page).

    Call it before any bound widget is drawn: a widget drops an invalid value from
    ``st.query_params`` when it is drawn. The dict lives in session state, so a
    check interrupted by a rerun happens on the next run.
    """
    if _READ not in st.session_state:
        params = {key: st.query_params[key] for key in URL_KEYS if key in st.query_params}
        st.session_state[_READ] = params
        for key, n in rerun_gate.cut_lengths().items():  # a link too long for Streamlit
            notice(
                f"The link's {quoted(key)} was cut to its first {MAX_URL_TEXT:,} of {n:,} characters."
            )
    return st.session_state[_READ]


def check(key: str, raw: str | None, shown: object, why: str) -> None:
    """A notice if the link asked for ``raw`` and the bound widget shows ``shown``
    instead (the binding refused the value)."""
    if raw is not None and raw != str(shown):
        notice(f"Ignored the link's {key}={quoted(raw)}: {why}")


def clean_text(raw: str | None, default: str) -> str | None:
    """The sentence to put in place of the link's ``text`` when it needs cleaning
    (over-long, control characters, nothing visible: then ``default``), with its
    notice queued; None when the link's text is fine as it is (or absent)."""
    if raw is None:
        return None
    text, message = parse_text(raw)
    if text is None:
        check("text", raw, None, "there is no visible text in it.")
        return default
    if message:
        notice(message)
    return text if text != raw else None


_WHOLE = re.compile(r"-?[0-9]{1,9}")  # ASCII digits only; more than 9 is out of any range


def refused_number(key: str, lo: int, hi: int, what: str) -> str | None:
    """Before the number widget bound to ``key`` is first drawn: a link's value that is
    not a whole number ``lo``..``hi`` (``inf``, ``nan``, ``1e309``, ``1.5``, ``-3``,
    ``٣``, a NUL, 100k characters) is dropped from the URL; returns its one-line notice
    (None when the value is fine, absent, or the widget already has a value). Then queue
    the notice and rerun before drawing the widget: Streamlit seeds a bound widget from
    the query string its run started with, which still holds the value."""
    raw = st.query_params.get(key)
    if raw is None or key in st.session_state:
        return None
    if _WHOLE.fullmatch(raw) and lo <= int(raw) <= hi:
        return None
    try:
        del st.query_params[key]
    except st.errors.StreamlitAPIException:  # already bound: the widget drops it itself
        pass
    return f"Ignored the link's {key}={quoted(raw)}: not {what} ({lo}–{hi})."


def set_param_before_widget(key: str, value: str) -> bool:
    """Write ``value`` into the URL's ``key`` before its bound widget is drawn (then the
    widget reads it, and the address bar and a reload show it); False once a widget
    has bound the key (Streamlit refuses to set a bound parameter)."""
    try:
        st.query_params[key] = value
    except st.errors.StreamlitAPIException:
        return False
    return True


def show_notices() -> None:
    """One warning line per refused or changed link parameter, on the run that read it."""
    st.session_state[_SHOWN] = st.session_state.pop(_NOTICES, [])
    for message in st.session_state[_SHOWN]:
        say("warning", message, icon=":material/link_off:")


def rerun() -> None:
    """``st.rerun()``, the notices shown on this run shown again on the next."""
    for message in st.session_state.pop(_SHOWN, []):
        notice(message)
    st.rerun()
