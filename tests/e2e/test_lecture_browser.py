"""End to end in headless Chromium: the lecture path, walked with Next from the first
step to the last, and opened at a step from a link."""

from __future__ import annotations

import json

import pytest

from tests.e2e.conftest import open_page
from tests.helpers import EXPORTED
from tests.helpers.browser import click_until, wait_idle, wait_plot
from ui.lecture.story import STEPS

FIGURE = (
    ".st-key-lecture_figure .js-plotly-plot .main-svg, "
    '.st-key-lecture_figure [data-testid="stVegaLiteChart"]'
)


BAR_JS = """([key, col]) => {
  const gd = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, box = gd.getBoundingClientRect();
  return [box.left + xa._offset + xa.l2p(col - 0.2), box.top + ya._offset + ya.l2p(1.0)];
}"""
SHADED_JS = """(key) => {
  const gd = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  return gd.layout.shapes[0].x0 + 0.5;
}"""


@pytest.fixture(scope="module")
def page(browser):
    """One page for the module: each test opens its URL first (``open_page``: a page that
    drew the app before draws the next URL in half the time of a new page's)."""
    with open_page(browser) as pg:
        yield pg


def _step_shown(page, n: int) -> None:
    page.get_by_role("heading", name=f"{n}. {STEPS[n - 1].title}", level=2).wait_for()
    figure = page.locator(FIGURE).first
    figure.wait_for()
    assert figure.is_visible(), n
    assert not page.locator('[data-testid="stException"]').count(), n
    assert n == 1 or f"step={n}" in page.url, page.url  # the default is left out


def test_walk_the_lecture_with_next_and_open_a_step_from_its_link(page, server_url):
    page.goto(f"{server_url}/lecture")
    wait_idle(page)
    # first in the sidebar's navigation
    nav = page.locator('[data-testid="stSidebarNav"] a')
    assert nav.first.inner_text().strip().endswith("Lecture path")
    page.get_by_role("heading", name="1. ", level=2).first.wait_for()
    for n in range(1, len(STEPS) + 1):
        if n > 1:
            page.get_by_role("button", name="Next").click()
            wait_idle(page)
        _step_shown(page, n)
    assert page.get_by_role("button", name="Next").is_disabled()
    page.goto(f"{server_url}/lecture?step=7")  # the block: click token 3's attention bar
    wait_idle(page)
    page.get_by_text("Token 15 ").wait_for()  # nothing picked: the last token
    page.locator(".st-key-block_contributions").scroll_into_view_if_needed()
    wait_plot(page, "block_contributions")
    click_until(
        page,
        lambda: page.evaluate(BAR_JS, ["block_contributions", 3]),
        page.get_by_text("Token 3 "),
    )
    wait_plot(page, "block_contributions")
    page.wait_for_function(f"({SHADED_JS})('block_contributions') === 3")
    page.goto(f"{server_url}/lecture?step=4")
    wait_idle(page)
    _step_shown(page, 4)
    page.goto(f"{server_url}/lecture?step=8")  # go deeper: the visualizer in the step's state
    wait_idle(page)
    _step_shown(page, 8)
    page.get_by_text("Go deeper").click()
    wait_idle(page)
    page.get_by_role("heading", name="Attention visualizer", level=1).wait_for()
    best = json.loads((EXPORTED / "model_card.json").read_text())["models"]["softmax"]
    layer, head = (best["probes"]["best_induction_head"][k] for k in ("layer", "head"))
    assert f"layer={layer}" in page.url and f"head={head}" in page.url, page.url
    assert page.get_by_role("combobox", name="Head").input_value() == str(head)


def test_step_2_goes_deeper_to_the_lesson_s_kernel_regression_at_its_width(page, server_url):
    """#44 item 9: step 2's "Go deeper" opens the encoder-decoder lesson scrolled to its
    step 3, the kernel regression, with the width the step showed."""
    page.goto(f"{server_url}/lecture?step=2")
    wait_idle(page)
    _step_shown(page, 2)
    page.locator(".st-key-lecture_nw input[type=range]").press("ArrowRight")  # w 0.3 -> 0.5
    page.get_by_text("Go deeper: The encoder-decoder lesson, step 3, at w = 0.5").click()
    wait_idle(page)
    heading = page.get_by_role("heading", name="3. Attention as kernel regression", level=2)
    heading.wait_for()
    page.wait_for_function(
        """() => { const h = document.getElementById("kernel-regression");
                   const top = h && h.getBoundingClientRect().top;
                   return top !== null && top >= 0 && top < window.innerHeight / 2; }"""
    )
    width = page.locator(".st-key-nw_width input[type=range]")
    assert width.get_attribute("value") == "0.5", page.url
