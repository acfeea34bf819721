"""A long sentence in a real browser: a nanoGPT character model with nanoGPT's own block
size (256), uploaded as a user would, and a 256-token sentence in the attention view."""

from __future__ import annotations

import re

from tests.e2e.test_browser import type_sentence, upload_files
from tests.helpers.browser import SCREENSHOTS, wait_idle
from tests.helpers.nanogpt_layout import ARGS, TEXT, ckpt_bytes, meta_bytes, nanogpt_state

T = 256
MAX_LABELS = 20  # per axis: a label every ~20 px of a ~400 px axis at most

FIGURE = """(el) => {
    const gd = el.querySelector('.js-plotly-plot');
    return {
        height: gd.layout.height,
        x: gd.data[0].x, y: gd.data[0].y,
        title: (gd.layout.title || {}).text || '',
        traces: gd.data.length,
    };
}"""

# The pixel centre of cell (i, j) of the first heatmap relative to the chart, from
# plotly's own axes; and a listener that keeps the cell plotly's hover picks.
CELL = """(el, [i, j]) => {
    const gd = el.querySelector('.js-plotly-plot');
    gd.on('plotly_hover', (e) => { window.hovered = e.points[0].pointNumber; });
    const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
    return {x: xa._offset + xa.l2p(j), y: ya._offset + ya.l2p(i)};
}"""
HOVERED = """(el) => {
    const [i, j] = window.hovered;
    return {i: i, j: j, z: el.querySelector('.js-plotly-plot').calcdata[0][0].z[i][j]};
}"""


# Max over block (bi, bj) of `block` tokens of the big heatmap's z, and the overview's cell.
POOLED = """([big, grid, bi, bj, block]) => {
    const z = big.querySelector('.js-plotly-plot').calcdata[0][0].z;
    let m = -Infinity;
    for (let i = bi * block; i < (bi + 1) * block; i++)
        for (let j = bj * block; j < (bj + 1) * block; j++) m = Math.max(m, z[i][j]);
    const cells = grid.querySelector('.js-plotly-plot').calcdata[0][0].z;
    return {max: m, cell: cells[bi][bj], n: cells.length};
}"""


def labels(chart, axis: str) -> list[str]:
    """The tick labels plotly drew on ``axis`` ("x", "y") of the chart's first subplot."""
    return chart.locator(f".{axis}axislayer-above .{axis}tick text").all_text_contents()


def test_a_256_token_sentence_fits_the_page_with_per_cell_hover(page, server_url, tmp_path):
    args = {**ARGS, "block_size": T}
    ckpt, meta = tmp_path / "ckpt.pt", tmp_path / "meta.pkl"
    ckpt.write_bytes(ckpt_bytes(nanogpt_state(args), args))
    meta.write_bytes(meta_bytes())
    upload_files(page, server_url, [ckpt, meta])
    type_sentence(page, (TEXT * 4)[:T])  # 256 characters: 256 tokens, the whole context
    big, grid = page.locator(".st-key-attn_big"), page.locator(".st-key-attn_grid")
    grid.locator(".js-plotly-plot").wait_for()
    wait_idle(page)
    assert not page.locator('[data-testid="stException"]').count()

    fig = big.evaluate(FIGURE)
    assert len(fig["x"]) == len(fig["y"]) == T  # one row and one column per token
    box = big.locator(".js-plotly-plot").bounding_box()
    column = big.locator(  # the figure's column, or the page's when it spans the page
        "xpath=ancestor::div[@data-testid='stColumn' or @data-testid='stMainBlockContainer'][1]"
    ).bounding_box()
    # square cells as large as the room: at most one screen (ui/square.js, #44 item 1)
    assert box["height"] <= page.viewport_size["height"] and fig["height"] <= box["height"] + 1
    assert (
        column["x"] - 1 <= box["x"] and box["x"] + box["width"] <= column["x"] + column["width"] + 1
    )
    assert box["x"] + box["width"] <= page.viewport_size["width"]

    for axis in ("x", "y"):  # thinned: every k-th token, each label a token of the sentence
        drawn = labels(big, axis)
        assert 2 <= len(drawn) <= MAX_LABELS, (axis, drawn)
        assert set(drawn) <= set(fig[axis]) and all(re.match(r"\d+·", s) for s in drawn)

    i, j = 200, 37  # a query late in the sentence looking at an early key
    cell = big.evaluate(CELL, [i, j])
    page.mouse.move(box["x"] + cell["x"], box["y"] + cell["y"])
    page.wait_for_function("() => window.hovered !== undefined")
    text = big.locator(".hoverlayer .hovertext").text_content()  # lines run together (tspans)
    got = big.evaluate(HOVERED)  # cells are ~1.5 px: the one under the pointer, +-1
    assert abs(got["i"] - i) <= 1 and abs(got["j"] - j) <= 1, got
    assert f"query: {fig['y'][got['i']]}" in text and f"key: {fig['x'][got['j']]}" in text, text
    assert f"weight: {got['z']:.3f}" in text, (text, got)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    big.screenshot(path=str(SCREENSHOTS / "long_sentence_head.png"))

    overview = grid.evaluate(FIGURE)
    assert "Overview of 256 tokens" in overview["title"]
    assert "max over a block of 4 × 4" in overview["title"]
    assert overview["traces"] == ARGS["n_layer"] * ARGS["n_head"]
    assert grid.locator(".gtitle").text_content().startswith("Overview of 256 tokens")  # on screen
    handles = [big.element_handle(), grid.element_handle()]
    for bi, bj in [(50, 9), (63, 0), (10, 10)]:  # layer 0, head 0 is the big heatmap too
        pooled = page.evaluate(POOLED, [*handles, bi, bj, 4])
        assert pooled["n"] == 64 and pooled["cell"] == pooled["max"], pooled
    grid.screenshot(path=str(SCREENSHOTS / "long_sentence_overview.png"))
