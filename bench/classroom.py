"""In class (#21): a click on a heatmap cell, a lecture step, and presenter mode's server time.

The same real server and Chromium as ``bench/browser.py``, timed by the same probe
(``bench/paint_probe.js``: from the input event to the frame painted after the chart
first held its final figure):

* a click on a cell of the attention heatmap (``attn_big``) of another row: the row bars
  (same chart) painted with the new query; after each, a head click as ``bench.browser``
  times it, the same run's baseline;
* Next (or Previous) on the lecture path: every chart of the new step painted (a step
  whose figure is not Plotly: the last DOM change inside ``lecture_figure``);
* presenter mode: the server's own time, not the browser's. Two websocket sessions of
  ``bench/stclient.py`` on the same link, one with ``present=1``, pick the heads in turn,
  alternating; each rerun is timed from its BackMsg to ``script_finished``, and the
  server's CPU seconds (psutil on its pid) are read around each.
"""

from __future__ import annotations

import asyncio
import contextlib
import urllib.parse
from pathlib import Path

from bench.browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    PROBE,
    _click_head,
    _measure,
    _options,
    _settle,
    _summary,
)
from bench.common import EXPORTED, sentence_of, shipped
from bench.stclient import Session
from deploy.launch import APP, Server, serve
from inference.measure import summarize

TARGETS = {"cell_click_median_ms": 150.0, "lecture_step_median_ms": 400.0,
           "presenter_extra_ms": 5.0, "presenter_extra_ratio": 0.10}  # fmt: skip
# Each presenter session reruns at most once in this long: under the server's limit of 4
# reruns a second a session (ui/rerun_gate.py RATE_PER_S; the bench does not import ui).
PACE_S = 0.3
TOKENS = 16  # the clicked sentence: one cell a click layer point, every label shown
CELL_JS = """([key, row, col]) => {
  const gd = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, box = gd.getBoundingClientRect();
  return [box.left + xa._offset + xa.l2p(col), box.top + ya._offset + ya.l2p(row)];
}"""


def classroom(
    cells: int,
    steps: int,
    presenter_reruns: int,
    model: str = "softmax",
    warmup: int = 1,
    app: Path = APP,
    folder: Path = EXPORTED,
    server: Server | None = None,
) -> dict:
    """Time ``cells`` cell clicks, ``steps`` lecture steps and ``presenter_reruns`` head
    changes with and without presenter mode each, on one server.

    Args:
        model: the shipped model the links open; warmup: untimed actions of each kind
            first; app, folder, server: as ``bench.browser.browser``'s.

    Returns:
        ``cell_click`` and ``lecture_step``: summaries as ``bench.browser``'s (paint and
        script times, ms); ``presenter``: per mode (``off``, ``on``) the rerun times (ms)
        and the server's CPU per rerun (ms); the targets.
    """
    from playwright.sync_api import sync_playwright

    text = sentence_of(shipped(model, folder), TOKENS, seed=21)
    link = {"model": model, "text": text}
    running = contextlib.nullcontext(server) if server else serve(app, folder)
    with running as server:
        with sync_playwright() as p:
            chromium = p.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
            )
            try:
                page = chromium.new_page(viewport={"width": 1500, "height": 1100})
                page.add_init_script(path=str(PROBE))
                clicked, heads = _cells(page, server.url, link, warmup + cells)
                clicked, heads = clicked[warmup:], heads[warmup:]
                walked = _steps(page, server.url, link, warmup + steps)[warmup:]
            finally:
                chromium.close()
        presenter = asyncio.run(_presenter(server, link, warmup, presenter_reruns))
    return {
        "model": model,
        "chromium": chromium.version,
        "tokens": TOKENS,
        "cell_click": _summary(clicked),
        "head_click_same_run": _summary(heads),
        "lecture_step": _summary(walked) | {"steps": [r.get("step") for r in walked]},
        "presenter": presenter,
        "warmup": warmup,
        "targets": TARGETS,
    }


def _cells(page, url: str, link: dict, n: int) -> tuple[list[dict], list[dict]]:
    """Click column 0 of another row each time, time to the row bars painted; after each,
    a head click timed as ``bench.browser`` times it (the same run's baseline: on a
    loaded machine only the ratio says something)."""
    query = urllib.parse.urlencode({**link, "view": "attention"})
    page.goto(f"{url}/?{query}")
    _settle(page, need_change=None, first=True)
    heads = _options(page, "Head")
    cells, clicks = [], []
    for i in range(n):
        row = (3 + 5 * i) % TOKENS  # never the row shown before it (the last, then i - 1's)
        page.locator(".st-key-attn_big").scroll_into_view_if_needed()
        x, y = page.evaluate(CELL_JS, ["attn_big", row, 0])
        before = page.evaluate("window.__paint.state()")
        page.evaluate("window.__paint.arm('pointerdown')")
        page.mouse.click(x, y)
        cells.append(_measure(page, before, main_only=True))
        clicks.append(_click_head(page, heads[(i + 1) % len(heads)]))
    return cells, clicks


def _steps(page, url: str, link: dict, n: int) -> list[dict]:
    """Next to the last step, then Previous to the first, and so on; time to the new
    step's charts painted."""
    page.goto(f"{url}/lecture?{urllib.parse.urlencode(link)}")
    _settle(page, need_change=None, first=True)
    out, step, forward = [], 1, True
    for _ in range(n):
        if page.get_by_role("button", name="Next").is_disabled():
            forward = False
        elif page.get_by_role("button", name="Previous").is_disabled():
            forward = True
        button = page.get_by_role("button", name="Next" if forward else "Previous")
        before = page.evaluate("window.__paint.state()")
        page.evaluate("window.__paint.arm('pointerdown')")
        button.click()
        step += 1 if forward else -1
        out.append(_measure(page, before, main_only=False, fallback="lecture_figure"))
        out[-1]["step"] = step
    return out


async def _presenter(server: Server, link: dict, warmup: int, reruns: int) -> dict:
    """Head changes alternating between a plain and a presenting session."""
    base = {**link, "view": "attention"}
    modes = {"off": base, "on": {**base, "present": "1"}}
    record = {mode: {"ms": [], "cpu_ms": []} for mode in modes}
    async with contextlib.AsyncExitStack() as stack:
        sessions = {}
        for mode, query in modes.items():
            sessions[mode] = await stack.enter_async_context(Session(server.ws_url, query))
            await sessions[mode].open()
        for i in range(warmup + reruns):
            # each session under the server's rerun limit (``ui.rerun_gate``): back to back,
            # every other rerun waited 100-250 ms for the gate, in one mode or the other
            paced = asyncio.get_running_loop().time() + PACE_S
            for mode in modes if i % 2 else reversed(modes):  # who goes first alternates
                cpu = server.cpu_s()
                run = await sessions[mode].set("Head", str((i + 1) % 4))
                spent = (server.cpu_s() - cpu) * 1e3
                if i >= warmup:
                    record[mode]["ms"].append(run.ms)
                    record[mode]["cpu_ms"].append(spent)
                if run.exceptions() or not run.finished:
                    raise RuntimeError(f"presenter {mode}: {run.exceptions() or run.status}")
            await asyncio.sleep(max(0.0, paced - asyncio.get_running_loop().time()))
    for mode in modes:
        r = record[mode]
        r["rerun"] = summarize(r["ms"])
        r["cpu_per_rerun_ms"] = sum(r["cpu_ms"]) / max(len(r["cpu_ms"]), 1)
    return record
