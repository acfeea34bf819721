"""The one formatter for every one-line message the browser shows: upload refusals,
model errors, link (URL) notices, input notices, served-model lines.

A caller hands :func:`say` the line exactly as a student should read it, never
markdown: Streamlit's alerts and captions render their body as markdown, so
:func:`say` escapes every ASCII punctuation character (``ui.text.plain``) and the
browser shows the line as written: no backslash visible, nothing bold, italic, code,
LaTeX, link, image, colour or icon made from a file name or a word typed into a
link. ``tests/e2e/test_browser.py`` reads such a line back from the page.

What travels on the websocket is the escaped markdown body; :func:`ui.text.shown` (and
``bench.stwidgets.shown``, for the bench's own client) turns it back into the line.
"""

from __future__ import annotations

import streamlit as st

from ui.text import plain

KINDS = ("error", "warning", "info", "success", "caption")


def body(line: object) -> str:
    """The markdown body that a browser shows as ``str(line)``, on one line (a newline
    becomes a space, and spaces around the line go: HTML shows neither)."""
    return plain(" ".join(str(line).splitlines()).strip())


def say(kind: str, line: object, icon: str | None = None) -> None:
    """Show ``line`` as a Streamlit ``kind`` element (``error``, ``warning``, ``info``,
    ``success``: an alert with ``icon``; ``caption``: small grey text), read in the
    browser exactly as ``str(line)``.

    Raises:
        ValueError: ``kind`` is none of :data:`KINDS`.
    """
    if kind not in KINDS:
        raise ValueError(f"say: kind {kind!r} is none of {KINDS}")
    if kind == "caption":
        st.caption(body(line))
    else:
        getattr(st, kind)(body(line), icon=icon)
