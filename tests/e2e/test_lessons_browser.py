"""End to end in headless Chromium: every lesson page opens from the sidebar and draws."""

from __future__ import annotations

import urllib.parse

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import open_page
from tests.helpers.browser import open_dropdown, wait_idle

# (link text in the sidebar navigation, page title, url path, key of one of its charts)
LESSONS = [
    ("Soft vs hard attention", "Soft vs hard attention", "soft-hard", "lesson_beta_attn"),
    ("Scoring functions", "Scoring functions", "scoring", "lesson_scores"),
    ("Kernel view", "The kernel view", "kernel", "lesson_kernel"),
    ("Merged bilinear form", "The merged bilinear form", "merged", "lesson_params"),
]


def _open_from_sidebar(page, link_text: str) -> None:
    nav = page.locator('[data-testid="stSidebarNav"]')
    nav.get_by_role("link", name=link_text, exact=True).click()
    wait_idle(page)


def _no_exception(page) -> None:
    assert not page.locator('[data-testid="stException"]').count()


@pytest.fixture(scope="module")
def page(browser):
    """One page for the module: each test opens its URL first (``open_page``: a page that
    drew the app before draws the next URL in half the time of a new page's)."""
    with open_page(browser) as pg:
        yield pg


@pytest.fixture
def app_page(page, server_url):
    page.goto(server_url)
    wait_idle(page)
    page.locator('[data-testid="stSidebarNav"]').wait_for()
    return page


def test_every_lesson_opens_from_the_sidebar_and_draws(app_page):
    page = app_page
    for link, title, url_path, chart_key in LESSONS:
        _open_from_sidebar(page, link)
        page.get_by_role("heading", name=title, level=1).wait_for()
        # this page's own chart (Streamlit marks keyed elements with st-key-<key>), drawn
        chart = page.locator(f".st-key-{chart_key} .js-plotly-plot .main-svg").first
        chart.wait_for()
        assert chart.is_visible(), link
        assert page.url.rstrip("/").split("?")[0].endswith(url_path), page.url
        _no_exception(page)


def _shows(page, layer: str, head: str) -> None:
    """The Layer and Head pickers show ``layer`` and ``head``, once the page's run has
    drawn them (the visualizer draws them last, in its fragment); a picker that settles
    on another value fails."""
    expect(page.get_by_role("combobox", name="Layer")).to_have_value(layer)
    expect(page.get_by_role("combobox", name="Head")).to_have_value(head)


def _url(page) -> str:
    return urllib.parse.unquote_plus(page.url)


def test_a_shared_link_survives_switching_pages(page, server_url):
    """The sidebar's widgets are the same on every page and bound to the URL: a link's
    selection is on the lesson page, in its URL, after a change there, and back on
    the visualizer (with the visualizer's own view)."""
    text = "the cat sat on the mat ."
    page.goto(
        f"{server_url}/visualizer?model=linear&layer=1&head=2&view=mask&text=the+cat+sat+on+the+mat+."
    )
    wait_idle(page)
    page.get_by_text("max |recurrent − parallel|").first.wait_for()
    _open_from_sidebar(page, "Scoring functions")
    page.get_by_role("heading", name="Scoring functions", level=1).wait_for()
    page.locator(".st-key-lesson_scores .js-plotly-plot").first.wait_for()
    for part in ("model=linear", "layer=1", "head=2", f"text={text}"):
        assert part in _url(page), page.url
    assert page.get_by_role("radio", name="linear").is_checked()
    _shows(page, "1", "2")
    assert page.get_by_role("textbox", name="Type a sentence").input_value() == text
    assert "L1 H2" in page.inner_text("body")  # the lesson works on the link's head
    open_dropdown(page, page.get_by_role("combobox", name="Head"))
    page.get_by_role("option", name="3", exact=True).click()
    wait_idle(page)
    page.get_by_text("L1 H3").first.wait_for()
    assert "head=3" in _url(page)  # the bound selectbox wrote its new value into the URL
    _open_from_sidebar(page, "Visualizer")
    page.get_by_text("max |recurrent − parallel|").first.wait_for()  # view=mask again
    _shows(page, "1", "3")
    for part in ("model=linear", "layer=1", "head=3", "view=mask", f"text={text}"):
        assert part in _url(page), page.url
    _no_exception(page)
