"""The app's pages by url path, for links between them.

``app.py`` builds the pages and registers them here before it runs one; a page links to
another with :func:`link` (``st.page_link`` needs the very ``st.Page`` object that
``st.navigation`` was given, which only ``app.py`` holds)."""

from __future__ import annotations

import streamlit as st

PAGES: dict[str, st.Page] = {}


def register(pages: list) -> None:
    """Remember ``pages`` (``st.Page`` objects) by their url path."""
    PAGES.update({page.url_path: page for page in pages})


def link(
    url_path: str, label: str, icon: str | None = None, query_params: dict | None = None
) -> None:
    """A link to the page at ``url_path`` (with ``query_params`` in its URL); plain text
    when no such page is registered (a page rendered on its own, as in a test)."""
    page = PAGES.get(url_path)
    if page is None:
        st.markdown(label)
        return
    st.page_link(page, label=label, icon=icon, query_params=query_params)
