"""The app's pages by url path, for links between them.

``app.py`` builds the pages and registers them here before it runs one; a page links to
another with :func:`link` (``st.page_link`` needs the very ``st.Page`` object that
``st.navigation`` was given, which only ``app.py`` holds)."""

from __future__ import annotations

from collections.abc import Collection, Mapping

import streamlit as st

from ui.link import parse_text

PAGES: dict[str, st.Page] = {}


def register(pages: list) -> None:
    """Remember ``pages`` (``st.Page`` objects) by their url path."""
    PAGES.update({page.url_path: page for page in pages})


def link(
    url_path: str, label: str, icon: str | None = None, state: dict[str, str] | None = None
) -> None:
    """A link to the page at ``url_path``; plain text when no such page is registered
    (a page rendered on its own, as in a test).

    ``state``: widget values (``text``, ``layer``, ``view``, ...) the page opens with,
    in the link's URL and, inside this session, adopted by :func:`adopt_link_state`
    (a bound widget takes its URL value only on a session's first run).
    """
    page = PAGES.get(url_path)
    if page is None:
        st.markdown(label)
        return
    params = None if state is None else {**state, FOLLOW: "1"}
    st.page_link(page, label=label, icon=icon, query_params=params)


FOLLOW = "follow"  # in a link's URL: its widget values replace the session's
TEXTS = ("text", "src")  # sentence boxes: cleaned as a shared link's text is
NUMBERS = ("layer", "head")  # their widgets' options are ints


def _adopted(key: str, value: str, choices: Mapping[str, Collection[str]]) -> object | None:
    """The widget value a link's ``key=value`` stands for, or None if it is not one."""
    if key in TEXTS:
        return parse_text(value)[0]
    if key in NUMBERS:
        return int(value) if value.isascii() and value.isdigit() else None
    options = choices.get(key, ())
    if isinstance(options, Mapping):  # the URL's text -> the widget's value (a float...)
        return options.get(value)
    return value if value in options else None


def adopt_link_state(choices: Mapping[str, Collection[str]]) -> None:
    """After a :func:`link` with ``state`` (its URL carries ``follow=1``): the URL's
    values go into the widgets' session state before any widget is drawn, so the page
    opens in the link's state; ``follow`` leaves the URL. Call it before the pages'
    widgets are drawn.

    Only the sentence boxes (``text``, ``src``: cleaned, capped), ``layer`` and ``head``
    (ASCII numbers; the widget checks the range) and the keys of ``choices`` (a value
    among its options; a mapping's key, adopted as the value it maps to) are adopted;
    anything else in the URL is left to the widgets.
    """
    if st.query_params.get(FOLLOW) != "1":
        return
    for key, value in st.query_params.to_dict().items():
        if key in TEXTS or key in NUMBERS or key in choices:
            adopted = _adopted(key, value, choices)
            if adopted is not None:
                st.session_state[key] = adopted
    del st.query_params[FOLLOW]
