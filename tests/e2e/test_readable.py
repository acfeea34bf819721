"""What a class sees at the narrowest window served (1280 px): every token labelled,
no label over another (#20 item 8), measured on the drawn SVG."""

from __future__ import annotations

import re
import urllib.parse

import pytest

from tests.e2e.conftest import open_page
from tests.helpers.browser import wait_idle

SENTENCE = "when Mary and John went to the store , John gave a drink to Mary ."  # 16 tokens

# Per plot: the tick labels plotly drew on each axis, their font size and boxes.
TICKS_JS = r"""() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(el => {
  const out = {};
  for (const g of el.querySelectorAll('g.xaxislayer-above, g.yaxislayer-above')) {
    const texts = Array.from(g.querySelectorAll('text')).filter(t => t.textContent.trim());
    const name = g.getAttribute('class') + ':' + (g.closest('g.subplot')?.getAttribute('class') || '');
    out[name + Object.keys(out).length] = texts.map(t => {
      const b = t.getBoundingClientRect();
      return {text: t.textContent, size: parseFloat(getComputedStyle(t).fontSize),
              box: [b.left, b.top, b.right, b.bottom],
              slanted: /rotate\(-45/.test(t.getAttribute('transform') || '')};
    });
  }
  return out;
})"""


def _overlap(a: list[float], b: list[float]) -> float:
    """Area (px²) where two boxes overlap."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return max(0.0, w) * max(0.0, h)


def _check_axes(plots: list[dict], n_labels: int, where: str) -> None:
    token_axes = 0
    for plot in plots:
        for axis, labels in plot.items():
            texts = [t["text"] for t in labels]
            if len(labels) < 8 or all(re.fullmatch(r"d?[0-9.]+", t) for t in texts):
                continue  # a colour bar, a value or dimension axis: not the tokens
            token_axes += 1
            assert len(labels) >= n_labels, (where, axis, [t["text"] for t in labels])
            assert min(t["size"] for t in labels) >= 11, (where, axis)
            if all(t["slanted"] for t in labels):  # boxes of slanted text overlap anyway:
                centres = sorted((t["box"][0] + t["box"][2]) / 2 for t in labels)
                gaps = [b - a for a, b in zip(centres, centres[1:], strict=False)]
                # the distance across two slanted lines is the gap times sin 45°
                assert min(gaps) * 0.7071 >= min(t["size"] for t in labels), (where, axis)
                continue
            boxes = [t["box"] for t in labels]
            pairs = [(_overlap(a, b), texts[i], texts[i + 1 + j])
                     for i, a in enumerate(boxes) for j, b in enumerate(boxes[i + 1 :])]  # fmt: skip
            worst = max(pairs)
            assert worst[0] <= 4.0, (where, axis, worst)  # glyph boxes may touch, not cover
    assert token_axes, where


@pytest.fixture(scope="module")
def narrow(browser):
    """One 1280 px wide page for the module: each test opens its URL first and only reads
    the page (``open_page``: the next URL drawn in half the time of a new page's)."""
    with open_page(browser, 1280, 2200) as page:
        yield page


@pytest.mark.parametrize("view", ["compare", "mask", "shapes"])
def test_every_token_is_labelled_at_1280_px(narrow, server_url, view):
    query = urllib.parse.urlencode({"view": view, "text": SENTENCE})
    narrow.goto(f"{server_url}/visualizer?{query}")
    wait_idle(narrow)
    narrow.wait_for_selector(".js-plotly-plot")
    narrow.wait_for_timeout(500)
    plots = narrow.evaluate(TICKS_JS)
    if view == "shapes":
        plots = plots[1:]  # the flow of boxes has no token axis
    _check_axes(plots, 16, view)


def test_every_word_is_labelled_on_translate_at_1280_px(narrow, server_url):
    narrow.goto(f"{server_url}/translate")
    wait_idle(narrow)
    narrow.wait_for_selector(".js-plotly-plot")
    narrow.wait_for_timeout(500)
    _check_axes(narrow.evaluate(TICKS_JS), 11, "translate")


# Text that CSS cuts with an ellipsis: the sidebar's page names and metric labels.
CUT_JS = r"""() => Array.from(document.querySelectorAll(
    '[data-testid="stSidebarNav"] *, [data-testid="stMetricLabel"], [data-testid="stMetricLabel"] *'))
  .filter(e => getComputedStyle(e).textOverflow === 'ellipsis' && e.scrollWidth > e.clientWidth + 1)
  .map(e => e.textContent)"""
# Each table's scroller: content beyond its box means rows or columns out of sight.
TABLES_JS = r"""() => Array.from(document.querySelectorAll('[data-testid="stDataFrame"] .dvn-scroller'))
  .map(e => [e.scrollHeight - e.clientHeight, e.scrollWidth - e.clientWidth])"""


@pytest.mark.parametrize("path", ["/kernel", "/visualizer?view=predict", "/visualizer?view=stats"])
def test_no_label_or_table_is_cut_at_1280_px(narrow, server_url, path):
    """#20 item 11: no page name in the sidebar ("From encoder-decoder to transf…") and
    no metric label ("max |softmax kernel − model's atte…") is cut; the Predictions and
    Head statistics tables show every row and column without an inner scroll."""
    narrow.goto(f"{server_url}{path}")
    wait_idle(narrow)
    if "view=" in path:  # the grid draws a moment after the run
        narrow.wait_for_selector('[data-testid="stDataFrame"] .dvn-scroller')
    narrow.wait_for_timeout(500)
    assert narrow.evaluate(CUT_JS) == [], path
    tables = narrow.evaluate(TABLES_JS)
    assert all(h <= 2 and w <= 2 for h, w in tables), (path, tables)
