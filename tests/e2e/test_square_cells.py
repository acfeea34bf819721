"""End to end in headless Chromium (#44 items 1, 3, 11): at 1280×720 and 1920×1080, with
and without presenter mode, every attention heatmap of the lecture's steps 1 and 8, the
attention view and the compare view has square cells (within 2 %), as large as the
room allows, starts on the first screen, and labels its tokens in at least 20 px when
presenting, 12 px otherwise; no colour bar's title is cut off, no axis title lies on its
tick labels, and plotly's toolbar covers no figure title when it shows on hover."""

from __future__ import annotations

import contextlib

import pytest

from tests.e2e.conftest import open_page
from tests.e2e.test_presenter_browser import OVERLAPS
from tests.helpers.browser import wait_idle, wait_plot, wait_settled

# Per heatmap of the chart keyed `key`: its cell's width and height, the least tick label
# (px) on its axes; the figure's box, its column's width, the screen's height, and what
# of the figure's text the svg cuts off (a colour bar's title at the right edge).
MEASURE = """(key) => {
  const gd = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  const fl = gd._fullLayout, box = gd.getBoundingClientRect();
  const svg = gd.querySelector('.main-svg').getBoundingClientRect();
  const heats = gd._fullData.filter(t => t.type === 'heatmap').map(t => {
    const xa = fl['xaxis' + t.xaxis.slice(1)], ya = fl['yaxis' + t.yaxis.slice(1)];
    const ticks = [...gd.querySelectorAll(`.${xa._id}tick text, .${ya._id}tick text`)];
    return {w: xa._length / Math.abs(xa.range[1] - xa.range[0]),
            h: ya._length / Math.abs(ya.range[1] - ya.range[0]),
            top: box.top + ya._offset + (svg.top - box.top),
            font: Math.min(...ticks.map(e => parseFloat(getComputedStyle(e).fontSize)))};
  });
  const cut = [...gd.querySelectorAll('.cbtitle text, .gtitle, .g-xtitle text, .g-ytitle text')]
    .filter(e => { const b = e.getBoundingClientRect();
      return b.width && (b.left < svg.left - 1 || b.right > svg.right + 1 || b.top < svg.top - 1); })
    .map(e => e.textContent);
  return {heats, cut, top: box.top, bottom: svg.bottom, width: svg.width,
          column: gd.parentElement.clientWidth, screen: innerHeight};
}"""

# Hover the figure: plotly's toolbar shows; no title or annotation under it.
COVERED = """(key) => {
  const gd = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  const bar = gd.querySelector('.modebar');
  if (!bar || getComputedStyle(bar).opacity === '0') return 'no toolbar shown';
  const b = bar.getBoundingClientRect();
  return [...gd.querySelectorAll('.gtitle, .annotation-text')].filter(e => {
    const t = e.getBoundingClientRect();
    return t.width && t.left < b.right && b.left < t.right && t.top < b.bottom && b.top < t.bottom;
  }).map(e => e.textContent);
}"""

PAGES = [
    ("lecture?step=1", ["lecture_cues"]),
    ("lecture?step=8", ["lecture_induction"]),
    ("visualizer", ["attn_big"]),
    ("visualizer?view=compare", ["cmp_softmax", "cmp_linear"]),
]


def _check(m: dict, presenting: bool, where: str) -> None:
    assert m["heats"], where
    for heat in m["heats"]:
        assert abs(heat["w"] / heat["h"] - 1) <= 0.02, (where, heat)  # square
        assert heat["top"] < m["screen"], (where, heat, m["screen"])  # on the first screen
        assert heat["font"] >= (20 if presenting else 12), (where, heat)
    assert m["top"] < m["screen"], (where, m)
    assert m["cut"] == [], (where, m["cut"])
    # as large as the room allows: across its column, or down to the screen's bottom
    # (presenting; otherwise a screen of its own)
    down = m["bottom"] / m["screen"] if presenting else (m["bottom"] - m["top"]) / m["screen"]
    assert max(m["width"] / m["column"], down) >= 0.93, (where, m)
    if presenting:
        assert m["bottom"] <= m["screen"], (where, m)  # whole above the fold


@pytest.fixture(scope="module")
def screens(browser):
    """``screens(width, height)``: one page per screen size for the module (each test
    opens its URLs first, and hovers at most; ``open_page``: the next URL drawn in half
    the time of a new page's)."""
    with contextlib.ExitStack() as stack:
        pages = {}

        def screen(width: int, height: int):
            if (width, height) not in pages:
                pages[width, height] = stack.enter_context(open_page(browser, width, height))
            return pages[width, height]

        yield screen


@pytest.mark.parametrize("presenting", [False, True], ids=["plain", "presenting"])
@pytest.mark.parametrize(("width", "height"), [(1280, 720), (1920, 1080)])
def test_square_cells_as_large_as_the_room(screens, server_url, width, height, presenting):
    page = screens(width, height)
    for path, keys in PAGES:
        url = f"{server_url}/{path}" + ("&present=1" if "?" in path else "?present=1")
        page.goto(url if presenting else f"{server_url}/{path}")
        wait_idle(page)
        for key in keys:
            wait_plot(page, key)
        for key in keys:
            wait_settled(page, key)  # the figure fitted to its square (ui/square.js)
        for key in keys:
            where = f"{path} {key} {width}x{height} present={presenting}"
            _check(page.evaluate(MEASURE, key), presenting, where)
            assert page.evaluate(OVERLAPS, key) == [], where
        assert not page.locator('[data-testid="stException"]').count(), path


@pytest.mark.parametrize(
    ("path", "key"), [("lecture?step=2", "lecture_nw_fit"), ("visualizer", "attn_big")]
)
def test_toolbar_covers_no_title_at_1280(screens, server_url, path, key):
    page = screens(1280, 720)
    page.goto(f"{server_url}/{path}")
    wait_idle(page)
    wait_plot(page, key)
    chart = page.locator(f".st-key-{key} .js-plotly-plot")
    chart.scroll_into_view_if_needed()
    chart.hover()
    page.wait_for_timeout(400)  # the toolbar fades in
    assert page.evaluate(COVERED, key) == [], path
    page.mouse.move(0, 0)  # the shared page's next test starts with no figure hovered


def test_the_delta_models_states_are_square_at_1280(screens, server_url):
    """#44 item 2: the delta model's mask view drew its 32×32 states 76×290 px."""
    page = screens(1280, 720)
    page.goto(f"{server_url}/visualizer?model=delta&view=mask")
    wait_idle(page)
    for key in ("delta_before", "delta_update", "delta_after"):
        wait_plot(page, key)
    page.wait_for_timeout(300)
    for key in ("delta_before", "delta_update", "delta_after"):
        (heat,) = page.evaluate(MEASURE, key)["heats"]
        assert abs(heat["w"] / heat["h"] - 1) <= 0.02 and heat["w"] >= 5, (key, heat)


# Text drawn above a fitted figure after its fit (a late caption, the presenter's fonts):
# 40 px more above the attention heatmap.
PUSH_DOWN = """() => { const d = document.createElement('div'); d.style.height = '40px';
  const block = document.querySelector('[data-testid="stMainBlockContainer"]');
  block.insertBefore(d, block.firstChild); }"""


def test_a_fitted_figure_pushed_down_fits_again(screens, server_url):
    """Presenting at 1280×720, the attention heatmap is fitted again, square and above the
    fold, when what is above it grows after its fit (a full run had it end 10 px below)."""
    page = screens(1280, 720)
    page.goto(f"{server_url}/visualizer?present=1")
    wait_idle(page)
    wait_plot(page, "attn_big")
    wait_settled(page, "attn_big")
    before = page.evaluate(MEASURE, "attn_big")
    page.evaluate(PUSH_DOWN)
    page.wait_for_function(  # fitted again: above the fold (a busy machine: a while)
        """() => document.querySelector('.st-key-attn_big .js-plotly-plot')
          .getBoundingClientRect().bottom <= innerHeight"""
    )
    wait_settled(page, "attn_big")
    after = page.evaluate(MEASURE, "attn_big")
    assert after["top"] >= before["top"] + 39, (before, after)  # it moved down
    _check(after, True, "visualizer attn_big 1280x720 present=True, pushed down 40 px")
