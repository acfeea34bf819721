"""Accessibility of every page, checked by axe-core in Chromium (#20 item 20).

axe-core comes from the pinned ``axe-playwright-python`` package (its ``axe.min.js``),
injected into the page: nothing is downloaded at run time. The app's own elements may
have no serious or critical violation; what Streamlit itself draws around them is
reported by axe too and named in the failure, so a violation can be traced.
"""

from __future__ import annotations

import pytest

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


@pytest.mark.parametrize("path", PAGES)
def test_no_serious_accessibility_violation(page, server_url, path):
    page.goto(f"{server_url}/{path}")
    wait_idle(page)
    page.wait_for_selector("h1")
    found = violations(page)
    assert found == [], [
        (v["id"], v["impact"], [(n["target"], n["failureSummary"][:160]) for n in v["nodes"]][:3])
        for v in found
    ]
