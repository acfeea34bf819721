"""End to end in headless Chromium: clicking a heatmap cell (the attention view's, the mask
view's panels) picks its query token, and
▶ play steps through the queries in the browser, with no rerun of the script."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.helpers.browser import open_dropdown, wait_idle, wait_plot

# the script-state changes seen so far (tests/helpers/browser.py ``watch_runs``: a rerun
# changes the state at least twice)
RUNS = "window.__attnvizRuns ?? null"
OUTLINED_ROWS_JS = """(key) => {
  const gd = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  window.__rows = window.__rows || new Set();
  window.__rows.add(gd.layout.shapes[0].y0 + 0.5);
  return [...window.__rows];
}"""
PLAYED_TITLES_JS = """(key) => {
  const gd = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  window.__titles = window.__titles || new Set();
  window.__titles.add(gd.layout.title.text);
  return [...window.__titles];
}"""
CELL_JS = """([key, row, col, panel]) => {
  const gd = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  const s = panel || '', full = gd._fullLayout, box = gd.getBoundingClientRect();
  const xa = full['xaxis' + s], ya = full['yaxis' + s];
  return [box.left + xa._offset + xa.l2p(col), box.top + ya._offset + ya.l2p(row)];
}"""


def settled_cell(page, args: list) -> tuple[float, float]:
    """CELL_JS's point once the figure has stopped moving: the same twice, 200 ms apart. On
    a busy machine the page can still move the chart (a scrollbar, the square-cell fit)
    after it drew, and a click at the point read before landed a row above."""
    point = page.evaluate(CELL_JS, args)
    for _ in range(20):
        page.wait_for_timeout(200)
        now = page.evaluate(CELL_JS, args)
        if now == point:
            break
        point = now
    return point


def test_clicking_a_cell_of_row_5_selects_query_5_everywhere(page, server_url):
    page.goto(f"{server_url}/visualizer")
    wait_idle(page)
    page.locator(".st-key-attn_big .js-plotly-plot .main-svg").first.wait_for()
    x, y = settled_cell(page, ["attn_big", 5, 2])
    page.mouse.move(x, y)  # the hover names the cell's tokens (the click layer's axes' ticks)
    hover = page.locator(".st-key-attn_big .hoverlayer .hovertext")
    expect(hover).to_contain_text(re.compile(r"query: 5·.*key: 2·.*weight: 0\.\d{3}"))
    x, y = settled_cell(page, ["attn_big", 5, 2])  # where the cell is now, after the hover
    page.mouse.click(x, y)
    # the rerun can start more than wait_idle's 600 ms after the click on a busy machine
    expect(page.get_by_role("combobox", name="Query token")).to_have_value(re.compile(r"^5: "))
    wait_idle(page)
    page.get_by_text("Row 5: where does").wait_for()  # the row bars' title
    page.get_by_role("heading", name="One query, step by step: query 5").wait_for()
    assert not page.locator('[data-testid="stException"]').count()
    # ▶ play: the outlined row moves query by query, in the browser only
    runs = page.evaluate(RUNS)
    assert runs is not None  # the page counts the script's runs
    page.locator(".st-key-attn_big .updatemenu-button").first.click()
    page.wait_for_function(f"({OUTLINED_ROWS_JS})('attn_big').length >= 4", polling=100)
    assert page.evaluate(RUNS) == runs
    page.locator(".st-key-view").get_by_text("predict", exact=True).click()  # same position
    wait_idle(page)
    page.locator(".st-key-pred_pos").get_by_text("5: ").first.wait_for()  # same position
    # ▶ play the linear recurrence: S_i and z_i token by token, in the browser only
    page.locator(".st-key-view").get_by_text("mask", exact=True).click()
    wait_idle(page)
    wait_plot(page, "mask_panels")
    outlined = page.evaluate(
        "() => document.querySelector('.st-key-mask_panels .js-plotly-plot')"
        ".layout.shapes.map(s => s.y0 + 0.5)"
    )
    assert outlined == [5, 5, 5]  # the mask view's panels outline the clicked row
    page.get_by_text("▶ Play S_i and z_i").click()
    runs = page.evaluate(RUNS)
    page.locator(".st-key-rec_play .updatemenu-button").first.click()
    page.wait_for_function(f"({PLAYED_TITLES_JS})('rec_play').length >= 4", polling=100)
    assert page.evaluate(RUNS) == runs
    # a click on a cell of the mask view's weights panel (row 3) picks query 3 there too
    page.locator(".st-key-mask_panels").scroll_into_view_if_needed()
    wait_plot(page, "mask_panels")
    x, y = settled_cell(page, ["mask_panels", 3, 1, "3"])
    page.mouse.move(x, y)
    hover = page.locator(".st-key-mask_panels .hoverlayer .hovertext")
    expect(hover).to_contain_text(re.compile(r"query: 3·.*key: 1·.*weight: "))
    page.mouse.click(x, y)
    wait_idle(page)
    page.get_by_text("Outlined: the row of query 3").wait_for()
    wait_plot(page, "mask_panels")
    page.wait_for_function(  # the mask view's panels outline row 3 once plotly redraws
        "() => document.querySelector('.st-key-mask_panels .js-plotly-plot')"
        ".layout.shapes.map(s => s.y0 + 0.5).join() === '3,3,3'"
    )
    assert not page.locator('[data-testid="stException"]').count()


ROW_BARS_JS = """() => {
  const gd = document.querySelector('.st-key-attn_big .js-plotly-plot');
  return {outline: gd.layout.shapes[0].y0 + 0.5, y: Array.from(gd._fullData[1].y)};
}"""


class HeldReruns:
    """The page's websocket to the server, with the browser's messages held back while
    ``hold`` is set; :meth:`release` sends what was held."""

    def __init__(self, page):
        self.held, self.hold, self._to_server = [], False, []
        page.route_web_socket("**/_stcore/stream", self._route)

    def _route(self, ws) -> None:
        self._to_server.append(ws.connect_to_server())
        ws.on_message(lambda m: self.held.append(m) if self.hold else self._to_server[-1].send(m))

    def release(self) -> None:
        self.hold = False
        for message in self.held:
            self._to_server[-1].send(message)


def test_a_clicked_cell_draws_its_row_before_the_server_answers(page, server_url):
    """The row bars of a clicked cell are drawn in the browser from the figure's frames
    (``ui.chart``): with the rerun held back, row 5 is outlined and its bars and
    title shown; when the rerun goes through, the server draws the same bars."""
    reruns = HeldReruns(page)
    page.goto(f"{server_url}/visualizer")
    wait_idle(page)
    page.locator(".st-key-attn_big .js-plotly-plot .main-svg").first.wait_for()
    reruns.hold = True
    x, y = settled_cell(page, ["attn_big", 5, 2])
    page.mouse.click(x, y)
    page.locator(".st-key-attn_big").get_by_text("Row 5: where does").wait_for()
    early = page.evaluate(ROW_BARS_JS)
    assert reruns.held and early["outline"] == 5  # drawn while the server had heard nothing
    assert page.get_by_role("combobox", name="Query token").input_value().startswith("15: ")
    reruns.release()
    query = page.get_by_role("combobox", name="Query token")
    expect(query).to_have_value(re.compile(r"^5: "))  # the server ran the click
    wait_idle(page)
    assert page.evaluate(ROW_BARS_JS) == early  # the server's figure: the same row
    assert not page.locator('[data-testid="stException"]').count()
    # a drag (Streamlit's chart pans) moves the click layer's axes with the heatmap's: each
    # point stays on its cell (plotly moves a subplot's overlays with it; fixedrange did not)
    x0, y0 = page.evaluate(CELL_JS, ["attn_big", 2, 1])
    x1, y1 = page.evaluate(CELL_JS, ["attn_big", 9, 8])
    page.mouse.move(x0, y0)
    page.mouse.down()
    page.mouse.move(x1, y1, steps=5)
    page.mouse.up()
    ranges = (
        "() => { const f = document.querySelector('.st-key-attn_big .js-plotly-plot')._fullLayout;"
        " return [f.xaxis.range, f.xaxis11.range, f.yaxis.range, f.yaxis11.range]; }"
    )
    page.wait_for_function(f"({ranges})()[0][0] !== -0.5")  # panned
    x, x_click, y, y_click = page.evaluate(ranges)
    assert x == x_click and y == y_click


SHOWN_HEAD_JS = """() => {
  const gd = document.querySelector('.st-key-attn_big .js-plotly-plot');
  const frames = (gd._transitionData || {})._frames || [];
  return {
    title: gd.layout.title.text,
    z: JSON.stringify(Array.from(gd._fullData[0].z, (row) => Array.from(row))),
    bars: JSON.stringify([Array.from(gd._fullData[1].y), gd._fullData[1].text]),
    frames: frames.length,
  };
}"""


def test_a_picked_head_is_drawn_before_the_server_answers(page, server_url):
    """A head picked in the sidebar is drawn in the browser from the figure, which carries
    the layer's other heads (``viz.attention.with_heads``): with the rerun held back,
    head 2's heatmap, row bars and title are shown; the server's figure for head 2,
    when the rerun goes through, is the same (and brings its ▶ frames back)."""
    reruns = HeldReruns(page)
    page.goto(f"{server_url}/visualizer?layer=1&head=0&text=the+old+man+walked+home+.")
    wait_idle(page)
    page.locator(".st-key-attn_big .js-plotly-plot .main-svg").first.wait_for()
    before = page.evaluate(SHOWN_HEAD_JS)
    assert before["title"] == "Layer 1, head 0" and before["frames"] > 0
    reruns.hold = True
    open_dropdown(page, page.locator(".st-key-head"))
    page.get_by_role("option", name="2", exact=True).click()
    page.wait_for_function(
        "() => document.querySelector('.st-key-attn_big .js-plotly-plot')"
        ".layout.title.text === 'Layer 1, head 2'"
    )
    early = page.evaluate(SHOWN_HEAD_JS)
    assert reruns.held and early["z"] != before["z"] and early["bars"] != before["bars"]
    reruns.release()
    page.wait_for_function(
        "() => ((document.querySelector('.st-key-attn_big .js-plotly-plot')"
        "._transitionData || {})._frames || []).length > 0"
    )
    wait_idle(page)
    after = page.evaluate(SHOWN_HEAD_JS)
    assert {k: after[k] for k in ("title", "z", "bars")} == {
        k: early[k] for k in ("title", "z", "bars")
    }  # the server's head 2: what the browser drew
    assert "head=2" in page.url
    assert not page.locator('[data-testid="stException"]').count()


COLUMN_TOP_JS = """([key, col]) => {
  const gd = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  const full = gd._fullLayout, box = gd.getBoundingClientRect(), svg = gd.querySelector('.main-svg');
  const xa = full.xaxis, ya = full.yaxis2, top = svg.getBoundingClientRect().top;
  return [box.left + xa._offset + xa.l2p(col), top + ya._offset + ya.l2p(0.9 * ya.range[1])];
}"""


def test_a_click_high_in_a_keys_column_makes_it_the_query(page, server_url):
    """#44 item 5: most bars of a row are 1-8 px tall; a click anywhere in key 2's column
    of the row bars (here near the axis's top, far above its bar) makes key 2 the query."""
    page.goto(f"{server_url}/visualizer")
    wait_idle(page)
    wait_plot(page, "attn_big")
    page.locator(".st-key-attn_big").scroll_into_view_if_needed()
    heights = page.evaluate(
        "() => Array.from(document.querySelector('.st-key-attn_big .js-plotly-plot')"
        "._fullData[1].y)"
    )
    assert heights[2] < 0.2  # the bar is short: the click lands well above it
    x, y = page.evaluate(COLUMN_TOP_JS, ["attn_big", 2])
    page.mouse.click(x, y)
    wait_idle(page)
    expect(page.get_by_role("combobox", name="Query token")).to_have_value(re.compile("^2: "))
    page.get_by_text("Row 2: where does").wait_for()


def test_arrow_keys_on_the_heatmap_move_the_query(page, server_url):
    """#44 item 13: the heatmap takes the keyboard focus; ArrowUp moves the query up a
    row (15 -> 14), Home to the first."""
    page.goto(f"{server_url}/visualizer")
    wait_idle(page)
    wait_plot(page, "attn_big")
    chart = page.locator(".st-key-attn_big .attnviz-chart")
    chart.focus()
    page.keyboard.press("ArrowUp")
    wait_idle(page)
    query = page.get_by_role("combobox", name="Query token")
    expect(query).to_have_value(re.compile("^14: "))
    chart.focus()
    page.keyboard.press("Home")
    wait_idle(page)
    expect(query).to_have_value(re.compile("^0: "))


# While ▶ play runs for `ms`: at every painted frame, the heatmap's image count, the
# outlined row and the row named by the bars' title.
PLAY_SAMPLES_JS = """async ([key, ms]) => {
  const gd = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  const rows = [], t0 = performance.now();
  const look = () => {
    const title = gd.querySelector('.annotation-text');
    rows.push([gd.querySelectorAll('.hm image').length, gd.layout.shapes[0].y0 + 0.5,
               title ? Number(title.textContent.match(/Row (\\d+)/)[1]) : null]);
    if (performance.now() - t0 < ms) requestAnimationFrame(look);
  };
  gd.querySelector('.updatemenu-button').dispatchEvent(new MouseEvent('click', {bubbles: true}));
  look();
  await new Promise(done => setTimeout(done, ms + 100));
  return rows;
}"""


def test_play_never_blanks_the_heatmap_and_moves_outline_and_title_together(page, server_url):
    """#44 item 6: plotly.js's animate redrew the figure at each frame, the heatmap gone
    for ~80 ms, the outline a frame ahead of the row's title (``ui/player.js``)."""
    page.goto(f"{server_url}/visualizer")
    wait_idle(page)
    wait_plot(page, "attn_big")
    rows = page.evaluate(PLAY_SAMPLES_JS, ["attn_big", 2300])
    assert len({outlined for _, outlined, _ in rows}) >= 3, rows  # it played
    assert all(images == 1 for images, _, _ in rows), rows
    assert all(outlined == titled for _, outlined, titled in rows), rows
