"""Accessibility of every page, checked by axe-core in Chromium (#20 item 20).

axe-core comes from the pinned ``axe-playwright-python`` package (its ``axe.min.js``),
injected into the page: nothing is downloaded at run time. The app's own elements may
have no serious or critical violation; what Streamlit itself draws around them is
reported by axe too and named in the failure, so a violation can be traced.
"""

from __future__ import annotations

import pytest

from tests.e2e.conftest import open_page
from tests.helpers.browser import wait_idle

PAGES = ["visualizer", "visualizer?view=mask", "visualizer?view=predict",
         "visualizer?view=stats", "soft-hard", "merged", "encoder-decoder", "translate"]  # fmt: skip
SERIOUS = {"serious", "critical"}
# Streamlit's own page navigation: its section headers sit inside its <ul> (axe's "list"
# rule); not the app's elements, so left out of the check.
NOT_OURS = {"exclude": [['[data-testid="stSidebarNav"]']]}


def violations(page) -> list[dict]:
    """axe-core's serious and critical violations of the page as drawn now."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page, context=NOT_OURS)
    found = results.response["violations"]
    return [v for v in found if v.get("impact") in SERIOUS]


# The level of every heading on the page, in document order.
HEADINGS_JS = """() => Array.from(document.querySelectorAll('h1, h2, h3, h4, h5, h6'))
  .map(h => [Number(h.tagName[1]), h.textContent.slice(0, 40)])"""


def heading_faults(levels: list[list]) -> list[str]:
    """What is wrong with a page's outline: not exactly one h1, first, or a heading more
    than one level below the one before it (axe's "heading-order", a moderate rule)."""
    faults = [] if [n for n, _ in levels].count(1) == 1 and levels[0][0] == 1 else ["one h1"]
    for (before, _), (level, text) in zip(levels, levels[1:], strict=False):
        if level > before + 1:
            faults.append(f"h{before} then h{level}: {text}")
    return faults


@pytest.fixture(scope="module")
def page(browser):
    """One page for the module: each test opens its URL first and only reads the page
    (``open_page``: a page that drew the app before draws the next URL in half the time)."""
    with open_page(browser) as pg:
        yield pg


@pytest.mark.parametrize("path", PAGES)
def test_no_serious_accessibility_violation(page, server_url, path):
    """... and the outline has one h1 and skips no level (#20 item 20)."""
    page.goto(f"{server_url}/{path}")
    wait_idle(page)
    page.wait_for_selector("h1")
    assert heading_faults(page.evaluate(HEADINGS_JS)) == [], path
    found = violations(page)
    assert found == [], [
        (v["id"], v["impact"], [(n["target"], n["failureSummary"][:160]) for n in v["nodes"]][:3])
        for v in found
    ]


# Per plot: the title's box and the toolbar's (None when it is not drawn).
TOOLBAR_JS = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(el => {
  const box = e => { if (!e) return null; const b = e.getBoundingClientRect();
    return b.width && b.height ? [b.left, b.top, b.right, b.bottom] : null; };
  return {title: box(el.querySelector('.gtitle')), bar: box(el.querySelector('.modebar'))};
})"""


def test_the_toolbar_leaves_titles_readable_on_a_phone(browser, server_url):
    """#20 item 20: at 390 × 844 plotly's toolbar covered the heatmap's title."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True)
    phone = context.new_page()
    try:
        phone.goto(f"{server_url}/visualizer")
        wait_idle(phone)
        phone.wait_for_selector(".js-plotly-plot .gtitle")
        plots = phone.evaluate(TOOLBAR_JS)
        phone.hover(".js-plotly-plot")  # the toolbar shows while the pointer is over it
        plots += phone.evaluate(TOOLBAR_JS)
    finally:
        context.close()
    titled = [p for p in plots if p["title"]]
    assert titled
    for p in titled:
        if p["bar"]:
            (l1, t1, r1, b1), (l2, t2, r2, b2) = p["title"], p["bar"]
            assert min(r1, r2) <= max(l1, l2) or min(b1, b2) <= max(t1, t2), p


def test_the_sidebars_page_list_has_no_serious_violation(page, server_url):
    """#44 item 13: axe found ``list`` and ``listitem`` (serious) in Streamlit's page list
    on every page: it is now a navigation of named groups of links (``ui/pagewide.js``)."""
    from axe_playwright_python.sync_playwright import Axe

    page.goto(f"{server_url}/visualizer")
    wait_idle(page)
    page.wait_for_selector('[data-testid="stSidebarNav"] [role="group"]')
    results = Axe().run(page, context={"include": [['[data-testid="stSidebarNav"]']]})
    found = [v["id"] for v in results.response["violations"] if v.get("impact") in SERIOUS]
    assert found == []
    groups = page.locator('[data-testid="stSidebarNav"] [role="group"]')
    assert groups.first.get_attribute("aria-label") == "Lecture"
