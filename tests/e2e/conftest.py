"""Debian's headless Chromium, and a Streamlit server of one's own (``streamlit_server``);
the shared server (``server``, ``server_url``) is in tests/conftest.py."""

from __future__ import annotations

import contextlib
import urllib.parse
from pathlib import Path

import pytest

from deploy import launch
from tests.helpers.browser import CHROMIUM, CHROMIUM_ARGS, TIMEOUT_MS, watch_runs

# The browser modules of the second chain (:func:`pytest_collection_modifyitems`), with
# tests/bench/test_live.py: about half of the browser tests' 681 test-seconds (a quiet
# `make test`, 2026-11-30), the first chain holding the rest.
SECOND_CHAIN = {
    "test_browser", "test_click_browser", "test_families_browser", "test_foreign_browser",
    "test_history_browser", "test_lab_browser", "test_lessons_browser",
    "test_long_sequences", "test_nanogpt_uploads", "test_predictions_browser",
    "test_translate_browser",
}  # fmt: skip


def pytest_collection_modifyitems(items) -> None:
    """Browser tests that try to take the shared server down run after all the others.

    Under pytest-xdist (``--dist loadgroup``) the browser tests run in two chains,
    ``browser`` and ``browser-2`` (:data:`SECOND_CHAIN`), each on one worker against that
    worker's server and Chromium: in one chain they were the run's critical path, and
    for its last minute the cores were 70-80 % idle while it finished alone. Every browser
    test is in the slow tier (``slow``: README "Testing").
    """
    items.sort(key=lambda item: item.module.__name__.endswith("test_hostile_uploads"))
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            second = item.module.__name__.rsplit(".", 1)[-1] in SECOND_CHAIN
            item.add_marker(pytest.mark.xdist_group("browser-2" if second else "browser"))
            item.add_marker(pytest.mark.slow)


free_port = launch.free_port


@contextlib.contextmanager
def streamlit_server(script_args: list[str] | None = None, env: dict | None = None):
    """``streamlit run app.py [-- script_args]`` on 127.0.0.1:<free port>, stopped on exit
    (``deploy/launch.py``, the launcher the bench and ``make serve-replicas`` use too).

    Yields a :class:`deploy.launch.Server`: ``url``, ``pid`` (the server process:
    ``streamlit`` itself, not a shell), ``log()`` (what the server printed so far).
    """
    with launch.serve(script_args=script_args or (), env=env) as running:
        yield running


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@contextlib.contextmanager
def open_page(browser, width: int = 1500, height: int = 1100, **options):
    """A page of ``width`` x ``height``, its waits scaled (``TIMEOUT_MS``) and its dialogs
    dismissed and kept in ``page.dialogs``; closed on exit.

    Without ``options`` (Playwright's context options, e.g. ``has_touch``) the page opens
    in the browser's one shared context (:func:`shared_context`): with Chromium's
    ``--process-per-site`` its pages share one renderer, whose compiled scripts make a new
    page draw the app for about 1 s less CPU than a page in a context of its own (2.9 s
    against 3.9 s, measured). With ``options``, in a context of its own, closed on exit.
    A module whose tests each open their URL first may share one page (a module-scoped
    fixture): a page that drew the app before draws the next URL in ~1.7 s."""
    own = None
    if options:
        own = browser.new_context(viewport={"width": width, "height": height}, **options)
        watch_runs(own)
    context = own or shared_context(browser)
    context.set_default_timeout(TIMEOUT_MS)  # every wait scales with a slow machine
    pg = context.new_page()
    origins: set[str] = set()
    if own is None:
        pg.set_viewport_size({"width": width, "height": height})
        pg.on("framenavigated", lambda frame: origins.add(_origin(frame.url)))
    pg.dialogs = []
    pg.on("dialog", lambda d: (pg.dialogs.append(d.message), d.dismiss()))
    try:
        yield pg
    finally:
        if own is not None:
            own.close()
        else:
            _forget(context, pg, origins)


def _origin(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme in ("http", "https") else ""


def _forget(context, pg, origins: set[str]) -> None:
    """Close a shared context's page and clear what it left for the next one: the
    cookies and each visited origin's storage (Streamlit keeps e.g. whether the sidebar
    was open in localStorage)."""
    if not pg.is_closed():  # a test that closed its page itself
        cdp = context.new_cdp_session(pg)
        for origin in origins - {""}:
            cdp.send("Storage.clearDataForOrigin", {"origin": origin, "storageTypes": "all"})
        cdp.detach()
        pg.close()
    context.clear_cookies()


def shared_context(browser):
    """The browser's one context for pages without options of their own (cookies and
    storage are shared between its pages: a test that changes the context's routes or
    cookies opens a context of its own)."""
    if getattr(browser, "attnviz_shared", None) is None:
        browser.attnviz_shared = browser.new_context(viewport={"width": 1500, "height": 1100})
        watch_runs(browser.attnviz_shared)
        _keep_renderer(browser.attnviz_shared)
    return browser.attnviz_shared


KEEPER_URL = "http://127.0.0.1:9/keeper"  # port 9 (discard): nothing is asked of it


def _keep_renderer(context) -> None:
    """Keep one page of the loopback site open in ``context`` while the tests' pages come
    and go, so that their shared renderer (``--process-per-site``: every server here is on
    127.0.0.1) and the scripts it compiled outlive each page. Without it the renderer exits
    with a test's last page and the next page starts one and compiles the app's scripts
    again: 4.9 CPU-s for a page to draw the app, against 2.6 s with it (measured here).
    The page is answered by Playwright (``route``); no request leaves the browser."""
    keeper = context.new_page()
    keeper.route(
        KEEPER_URL,
        lambda route: route.fulfill(body="<title>keeper</title>", content_type="text/html"),
    )
    keeper.goto(KEEPER_URL)


@pytest.fixture
def page(browser):
    with open_page(browser) as pg:
        yield pg
