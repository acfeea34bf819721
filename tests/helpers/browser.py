"""Headless Chromium for the browser tests, and waiting for Streamlit to be idle."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

from tests.helpers import ROOT
from tests.helpers.slow import FACTOR

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    # the pages of one context share a renderer (tests/e2e/conftest.py ``open_page``)
    "--process-per-site",
]
# Playwright's default for every wait of a page (its own default: 30 s), and a script run's
# (wait_idle): on a quiet machine a run takes under 5 s; the limits only cost when a test fails.
TIMEOUT_MS = 60_000 * FACTOR
IDLE_TIMEOUT_MS = 120_000 * FACTOR
SCREENSHOTS = Path(os.environ.get("SCREENSHOT_DIR", ROOT / "tests" / "e2e" / "screenshots"))


# Installed in every page of the tests' contexts (``watch_runs``): counts the changes of
# Streamlit's script state and notes when the last one happened, so that ``wait_idle``
# knows a run happened since it last returned.
RUNS_JS = """(() => {
  window.__attnvizRuns = 0;
  new MutationObserver((records) => {
    window.__attnvizRuns += records.length;
    window.__attnvizChangedAt = performance.now();
  }).observe(document, { attributes: true, subtree: true,
                         attributeFilter: ["data-test-script-state"] });
})();"""

IDLE_JS = """([call, hold, afterRun]) => {
  const w = window, now = performance.now();
  if (w.__idleCall !== call) { w.__idleCall = call; w.__idleSince = null; }
  const app = document.querySelector('[data-testid="stApp"]');
  if (app?.getAttribute("data-test-script-state") !== "notRunning") {
    w.__idleSince = null;
    return false;
  }
  w.__idleSince ??= now;
  const since = Math.max(w.__idleSince, w.__attnvizChangedAt ?? 0);
  const ran = w.__attnvizRuns !== undefined && w.__attnvizRuns > (w.__attnvizSeen ?? 0);
  if (now - since < (ran ? afterRun : hold)) return false;
  w.__attnvizSeen = w.__attnvizRuns;
  return true;
}"""
_WAITS = itertools.count()  # each wait's number: IDLE_JS starts its idle clock on a new one
HOLD_MS = 600  # idle this long when no run was seen since the last wait
AFTER_RUN_MS = 250  # idle this long after a run seen since the last wait


def watch_runs(context) -> None:
    """Count Streamlit's script-state changes in every page of ``context`` (``RUNS_JS``),
    for ``wait_idle``."""
    context.add_init_script(RUNS_JS)


def wait_idle(page, timeout: float | None = None) -> None:
    """Wait until Streamlit has run the script to the end and drawn the result.

    Streamlit marks its root element with ``data-test-script-state`` (``running``
    while the script runs, ``notRunning`` after). A run can start a moment after an input
    event, so the page must stay idle for ``HOLD_MS`` (600 ms); when the page's context
    counts the state's changes (``watch_runs``) and a run was seen since the last wait,
    ``AFTER_RUN_MS`` (250 ms) after it ended is enough. ``timeout`` (ms) defaults to
    IDLE_TIMEOUT_MS, which scales with a slow machine (``tests/helpers/slow.py``).
    """
    timeout = IDLE_TIMEOUT_MS if timeout is None else timeout
    page.wait_for_function(
        IDLE_JS, arg=[next(_WAITS), HOLD_MS, AFTER_RUN_MS], polling=50, timeout=timeout
    )


def click_until(page, where, shown, tries: int = 3) -> None:
    """Click the page at ``where()`` (viewport x, y, computed afresh each try) until the
    locator ``shown`` is visible, at most ``tries`` times. A figure can still move while
    the page around it finishes drawing (a busy machine), and a click at its old place
    hits nothing; clicking the same mark again selects the same thing.

    Raises:
        playwright's TimeoutError: if ``shown`` is not visible after the last click.
    """
    for attempt in range(tries):
        x, y = where()
        page.mouse.click(x, y)
        wait_idle(page)
        try:
            shown.wait_for(timeout=TIMEOUT_MS if attempt == tries - 1 else TIMEOUT_MS / 6)
            return
        except Exception:  # noqa: BLE001 - playwright's TimeoutError: try again
            if attempt == tries - 1:
                raise


def wait_plot(page, key: str) -> None:
    """Wait until the plotly figure inside the element keyed ``key`` is drawn: Streamlit can
    report idle a moment before plotly.js has mounted a chart (``_fullLayout`` unset), most
    often on a busy machine."""
    page.wait_for_function(
        "(key) => document.querySelector(`.st-key-${key} .js-plotly-plot`)?._fullLayout?.xaxis",
        arg=key,
    )


def open_dropdown(page, control) -> None:
    """Click a selectbox (``control``: a Playwright locator) with it centred in its
    scrolling sidebar or page first, and wait until its options are listed. A control
    at the very bottom edge of the window (the sidebar grew with the third model) opened
    no list in headless Chromium."""
    control.evaluate("e => e.scrollIntoView({block: 'center'})")
    control.click()
    page.get_by_role("option").first.wait_for()


SETTLED_JS = """([key, quiet]) => {
  const gd = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  if (!gd) return false;
  const r = gd.getBoundingClientRect();
  const now = [r.x, r.y, r.width, r.height].map(Math.round).join(",");
  const seen = (window.__settled = window.__settled || {});
  const last = seen[key];
  if (!last || last.box !== now) { seen[key] = { box: now, since: performance.now() }; return false; }
  return performance.now() - last.since >= quiet;
}"""


def wait_settled(page, key: str, quiet_ms: int = 400) -> None:
    """Wait until the plotly figure under ``.st-key-<key>`` has kept its place and size for
    ``quiet_ms``: ``ui/square.js`` fits a figure to its square cells after drawing it, and
    a busy machine may take a while (a fixed sleep measured it half-fitted)."""
    page.wait_for_function(SETTLED_JS, arg=[key, quiet_ms], polling=100)
