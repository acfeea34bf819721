"""Opening app.py's pages under AppTest by their url_path."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.helpers import ROOT

APP = str(ROOT / "app.py")


def open_page(url_path: str, at: AppTest | None = None) -> AppTest:
    """Run app.py, then switch to the page registered under ``url_path`` and run it.

    ``AppTest.switch_page`` only takes page *files*; these pages are callables, so
    the page hash is looked up in the registry that ``st.navigation`` fills (the
    default page is registered under the empty path).

    Raises:
        StopIteration: if no page is registered under ``url_path``.
    """
    if at is None:
        at = AppTest.from_file(APP, default_timeout=120).run()
    pages = at._registered_pages
    at._page_hash = next(h for h, info in pages.items() if info.get("url_pathname") == url_path)
    return at.run()


def short_patching_pair(at) -> None:
    """The patching view's pair set to one that fits a 16-token context: the default
    indirect-object pair is longer than that for a tiny byte-level BPE (the view says so
    and draws no grid); the corrupted sentence is the clean one's words in another order,
    so the two are the same length for any tokenizer."""
    notices = " ".join(w.value for w in at.warning)
    assert "longer than the model's context" in notices or "same length" in notices, notices
    at.text_input(key="clean").set_value("a cat sat")
    at.text_input(key="corrupted").set_value("a sat cat")
    at.run()
