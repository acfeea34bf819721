"""Debian's headless Chromium, and a Streamlit server of one's own (``streamlit_server``);
the shared server (``server``, ``server_url``) is in tests/conftest.py."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from deploy import launch
from tests.helpers.browser import CHROMIUM, CHROMIUM_ARGS, TIMEOUT_MS


def pytest_collection_modifyitems(items) -> None:
    """Browser tests that try to take the shared server down run after all the others.

    Under pytest-xdist (``--dist loadgroup``) every browser test runs on one worker, in
    this order, against one server; the unit tests share out the other worker. Every
    browser test is in the slow tier (``slow``: README "Testing").
    """
    items.sort(key=lambda item: item.module.__name__.endswith("test_hostile_uploads"))
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(pytest.mark.xdist_group("browser"))
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
    """A page in a browser context of its own (``options``: Playwright's, e.g.
    ``has_touch``), its waits scaled (``TIMEOUT_MS``) and its dialogs dismissed and kept
    in ``page.dialogs``; the context closed on exit.

    A module whose tests each open their URL first may share one such page (a
    module-scoped fixture): a page that drew the app before draws the next URL in ~1.7 s,
    a new page in ~3.5 s (measured, the visualizer on a warm server). A new context per
    test is no faster than a new page in a kept one: what is kept is the page's."""
    context = browser.new_context(viewport={"width": width, "height": height}, **options)
    context.set_default_timeout(TIMEOUT_MS)  # every wait scales with a slow machine
    pg = context.new_page()
    pg.dialogs = []
    pg.on("dialog", lambda d: (pg.dialogs.append(d.message), d.dismiss()))
    try:
        yield pg
    finally:
        context.close()


@pytest.fixture
def page(browser):
    with open_page(browser) as pg:
        yield pg
