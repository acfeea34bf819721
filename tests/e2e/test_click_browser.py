"""End to end in headless Chromium: clicking a heatmap cell picks its query token."""

from __future__ import annotations

from tests.helpers.browser import wait_idle

CELL_JS = """([key, row, col]) => {
  const gd = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, box = gd.getBoundingClientRect();
  return [box.left + xa._offset + xa.l2p(col), box.top + ya._offset + ya.l2p(row)];
}"""


def test_clicking_a_cell_of_row_5_selects_query_5_everywhere(page, server_url):
    page.goto(f"{server_url}/visualizer")
    wait_idle(page)
    page.locator(".st-key-attn_big .js-plotly-plot .main-svg").first.wait_for()
    x, y = page.evaluate(CELL_JS, ["attn_big", 5, 2])
    page.mouse.click(x, y)
    wait_idle(page)
    assert page.get_by_role("combobox", name="Query token").input_value().startswith("5: ")
    page.get_by_text("Row 5: where does").wait_for()  # the row bars' title
    page.get_by_role("heading", name="One query, step by step: query 5").wait_for()
    assert not page.locator('[data-testid="stException"]').count()
    page.locator(".st-key-view").get_by_text("predict", exact=True).click()  # same position
    wait_idle(page)
    assert "5: " in page.locator(".st-key-pred_pos").inner_text()
