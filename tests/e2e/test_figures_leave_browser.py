"""Figures that leave the app (#48 item 3), in headless Chromium: the attention view's HTML
file, as its download button makes it, opened from disk with every request but file://
refused, draws its figures with hover, a cell click's row and ▶ play, and its toolbar's
SVG is an SVG; in the app, each chart's toolbar downloads the figure as SVG (parsed) and
as PNG."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from playwright.sync_api import expect

from tests.helpers.browser import wait_idle, wait_plot
from tests.helpers.downloads import file_of, record_deferred
from tests.ui.test_app import new_app, no_errors

SVG = "{http://www.w3.org/2000/svg}svg"
CELL_JS = """([sel, row, col]) => {
  const gd = document.querySelector(sel), full = gd._fullLayout, box = gd.getBoundingClientRect();
  return [box.left + full.xaxis._offset + full.xaxis.l2p(col),
          box.top + full.yaxis._offset + full.yaxis.l2p(row)];
}"""

OUTLINE_JS = "() => document.querySelector('#figure-0').layout.shapes[0].y0 + 0.5"


def downloaded_svg(page, button) -> tuple[str, ET.Element]:
    """(file name, root element) of the SVG that a click on ``button`` downloads."""
    with page.expect_download() as download:
        button.click()
    return download.value.suggested_filename, ET.parse(download.value.path()).getroot()


def test_a_views_html_file_draws_offline_with_hover(page, tmp_path, monkeypatch):
    kept = record_deferred(monkeypatch)
    at = new_app(model="softmax", layer=1, head=3)
    no_errors(at)
    html, file_name, _ = file_of(at, kept, "This view as one HTML file")
    path = tmp_path / file_name
    path.write_bytes(html)
    asked = []

    def only_files(route) -> None:
        asked.append(route.request.url)
        route.continue_() if route.request.url.startswith("file://") else route.abort()

    page.route("**/*", only_files)
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(path.as_uri())
    page.wait_for_function("document.querySelector('#figure-1')?._fullLayout?.xaxis")
    assert page.locator("#figure-0 .heatmaplayer image").count() == 1  # the heatmap drawn
    x, y = page.evaluate(CELL_JS, ["#figure-0", 5, 2])
    page.mouse.move(x, y)
    hover = page.locator("#figure-0 .hoverlayer .hovertext")
    expect(hover).to_contain_text(re.compile(r"query: 5·.*key: 2·.*weight: 0\.\d{3}"))
    page.mouse.click(x, y)  # the cell's row outlined, from the figure's own frames
    page.wait_for_function(f"({OUTLINE_JS})() === 5", polling=100)
    page.locator("#figure-0 .updatemenu-button").first.click()  # ▶ play: on from row 6
    page.wait_for_function(f"({OUTLINE_JS})() >= 7", polling=100)
    name, root = downloaded_svg(page, page.locator('#figure-0 .modebar-btn[data-title*="SVG"]'))
    assert name == "attnviz_attn_big.svg" and root.tag == SVG
    assert [u for u in asked if not u.startswith(("file:", "data:"))] == [] and not errors


def test_each_charts_toolbar_downloads_svg_and_png(page, server_url):
    page.goto(f"{server_url}/visualizer?layer=1&head=3")
    wait_idle(page)
    wait_plot(page, "attn_big")
    chart = page.locator(".st-key-attn_big")
    chart.hover()
    name, root = downloaded_svg(page, chart.locator('.modebar-btn[data-title*="SVG"]'))
    assert name == "attnviz_attn_big.svg" and root.tag == SVG
    texts = " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
    assert "Layer 1, head 3" in texts  # the title as vector text
    with page.expect_download() as download:
        chart.locator('.modebar-btn[data-title="Download plot as a PNG"]').click()
    assert download.value.suggested_filename == "attnviz_attn_big.png"
    with open(download.value.path(), "rb") as png:
        assert png.read(8) == b"\x89PNG\r\n\x1a\n"
