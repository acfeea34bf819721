"""What a student sees: clicks in headless Chromium, timed inside the page.

A real ``streamlit run app.py`` (``deploy/launch.py``) and Debian's Chromium driven by
Playwright (``executable_path``, as the browser tests do). ``bench/paint_probe.js`` runs
in the page before the app loads. For each action it takes t0 from the user's input
event (``pointerdown`` on the head's option, ``keydown`` of Enter that submits a
sentence; ``event.timeStamp``) and the end from the page itself: the first
``plotly_afterplot`` at which a chart holds the figure it settles on (compared by a
fingerprint of its data), plus the next frame (``requestAnimationFrame``, then a
message: the frame has painted). Charts that are not Plotly fall back to the last DOM
change inside their keyed container. Waiting for the page to settle is not timed.

* head click: the main heatmap (the chart keyed ``attn_big``, else the first chart of
  the main area) painted with the new head; a click that leaves it unchanged is an error;
* new sentence: every chart of the view that changed painted (the latest of them).
"""

from __future__ import annotations

import contextlib
import time
import urllib.parse
from pathlib import Path

from bench.common import EXPORTED, sentence_of, shipped
from deploy.launch import APP, Server, serve
from inference.measure import summarize

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"]
PROBE = Path(__file__).with_name("paint_probe.js")
MAIN_KEY = "attn_big"
TARGETS = {"head_click_median_ms": 150.0, "sentence_median_ms": 400.0}
QUIET_MS = 400  # the page is settled after this long without a new chart or DOM change
SETTLE_TIMEOUT_S = 60.0
SENTENCE_T = (12, 24, 40, 64)  # tokens of the typed sentences, in turn (T <= 64)


def browser(
    clicks: int,
    sentences: int,
    model: str = "softmax",
    warmup: int = 1,
    app: Path = APP,
    folder: Path = EXPORTED,
    server: Server | None = None,
) -> dict:
    """Time ``clicks`` head clicks and ``sentences`` new sentences in one browser page.

    Args:
        clicks: timed head clicks (each picks another head of layer 0).
        sentences: timed new sentences (lengths cycle through ``SENTENCE_T``).
        model: the shipped model the link opens.
        warmup: untimed clicks and sentences first (plotly.js and caches warm up).
        app: the Streamlit script served (it needs a "Head" control and a "Type a
            sentence" box).
        folder: the shipped models the server serves (laid out like ``exported/``).
        server: a running server of ``app`` on ``folder`` to use (a test's shared one);
            None: start one.

    Returns:
        Per action: the timings (ms) from input to paint and to the script finishing,
        their summaries, how each end was detected, failures, and the targets.
    """
    from playwright.sync_api import sync_playwright

    onnx = shipped(model, folder)
    texts = [
        sentence_of(onnx, SENTENCE_T[i % len(SENTENCE_T)], seed=500 + i)
        for i in range(sentences + warmup + 1)
    ]
    running = contextlib.nullcontext(server) if server else serve(app, folder)
    with running as server, sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            page = chromium.new_page(viewport={"width": 1500, "height": 1100})
            page.add_init_script(path=str(PROBE))
            query = urllib.parse.urlencode({"model": model, "view": "attention", "text": texts[0]})
            page.goto(f"{server.url}/?{query}")
            _settle(page, need_change=None, first=True)
            heads = _options(page, "Head")
            clicked = [
                _click_head(page, heads[(i + 1) % len(heads)]) for i in range(warmup + clicks)
            ]
            typed = [_type(page, text) for text in texts[1:]]
        finally:
            chromium.close()
    return {
        "model": model,
        "chromium": chromium.version,
        "head_click": _summary(clicked[warmup:]),
        "sentence": _summary(typed[warmup:]),
        "sentence_tokens": [SENTENCE_T[i % len(SENTENCE_T)] for i in range(1 + warmup, len(texts))],
        "warmup": warmup,
        "targets": TARGETS,
    }


def _summary(records: list[dict]) -> dict:
    """Summaries of the paint and script times of the records that succeeded."""
    ok = [r for r in records if "error" not in r]
    return {
        "paint_ms": [r["paint_ms"] for r in ok],
        "paint": summarize([r["paint_ms"] for r in ok]) if ok else None,
        "script": summarize(done)
        if (done := [r["script_ms"] for r in ok if r["script_ms"]])
        else None,
        "detected_by": sorted({r["detected_by"] for r in ok}),
        "errors": [r["error"] for r in records if "error" in r][:5],
        "n_failed": len(records) - len(ok),
    }


def _control(page, label: str, timeout_s: float = 30.0) -> tuple[str, object]:
    """``(kind, locator)`` of the control labelled ``label``: a selectbox (combobox), a
    radio group, or a segmented control / pills (a button group). Waits up to
    ``timeout_s`` seconds for it (a rerun may still be drawing the page).

    Raises:
        LookupError: when the page has none after ``timeout_s``.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        combo = page.get_by_role("combobox", name=label)
        if combo.count():
            return "combobox", combo.first
        radios = page.get_by_role("radiogroup", name=label)
        if radios.count():
            return "radiogroup", radios.first
        group = page.locator('[data-testid="stButtonGroup"]', has_text=label)
        if group.count():
            return "buttons", group.first
        if time.monotonic() > deadline:
            raise LookupError(f"no control labelled {label!r} on the page")
        page.wait_for_timeout(100)


def _options(page, label: str) -> list[str]:
    """The option texts of the control labelled ``label`` (a dropdown is opened and closed)."""
    kind, control = _control(page, label)
    if kind == "combobox":
        _open(page, control)
        options = page.get_by_role("option").all_inner_texts()
        page.keyboard.press("Escape")
    elif kind == "radiogroup":  # st.radio (inputs in labels), segmented control (buttons)
        options = control.get_by_role("radio").evaluate_all(
            "els => els.map(e => (e.closest('label') || e).innerText)"
        )
    else:
        options = control.get_by_role("button").all_inner_texts()
    return [o.strip() for o in options]


def _open(page, control) -> None:
    """Open a selectbox's list: centred in its scrolling sidebar first (at the window's
    bottom edge headless Chromium opened no list), then wait for its options."""
    control.evaluate("e => e.scrollIntoView({block: 'center'})")
    control.click()
    page.get_by_role("option").first.wait_for()


def _pick(page, label: str, option: str) -> None:
    """Choose ``option`` in the control labelled ``label``; the final click is the armed one."""
    kind, control = _control(page, label)
    if kind == "combobox":
        _open(page, control)
        target = page.get_by_role("option", name=option, exact=True)
    elif kind == "radiogroup":
        target = control.get_by_role("radio", name=option, exact=True).first
        if target.evaluate("e => e.tagName") == "INPUT":  # st.radio: its label takes clicks
            target = target.locator("xpath=ancestor::label[1]")
    else:
        target = control.get_by_role("button", name=option, exact=True)
    page.evaluate("window.__paint.arm('pointerdown')")
    target.first.click()


def _click_head(page, head: str) -> dict:
    """Pick ``head`` in the Head control; time to the main heatmap painted anew."""
    before = page.evaluate("window.__paint.state()")
    _pick(page, "Head", head)
    return _measure(page, before, main_only=True)


def _type(page, text: str) -> dict:
    """Type ``text`` and submit it (Ctrl+Enter); time to the view's charts painted."""
    box = page.get_by_role("textbox", name="Type a sentence")
    box.fill(text)
    before = page.evaluate("window.__paint.state()")
    page.evaluate("window.__paint.arm('keydown', 'Enter')")
    box.press("Control+Enter")
    return _measure(page, before, main_only=False)


def _main_name(state: dict) -> str | None:
    return MAIN_KEY if MAIN_KEY in state else next(iter(state), None)


def _measure(page, before: dict, main_only: bool, fallback: str | None = None) -> dict:
    """Wait for the page to settle (untimed), then read the times the probe recorded.
    With ``fallback`` (a container's key), a change that redrew no Plotly chart ends at
    the last DOM change inside that container (a lecture step of tables and Vega-Lite)."""
    main = _main_name(before)
    try:
        _settle(page, need_change=(main, before.get(main)) if main_only else None)
    except TimeoutError as exc:
        return {"error": str(exc)}
    rec = page.evaluate(
        "({t0: __paint.t0, plots: __paint.plots, dom: __paint.dom, script: __paint.script,"
        " state: __paint.state()})"
    )
    after = rec["state"]
    names = [main] if main_only else [n for n in after if after[n] != before.get(n)]
    if not names and fallback and any(fallback in d["names"] for d in rec["dom"]):
        names = [fallback]
    if not names or (main_only and after.get(main) == before.get(main)):
        return {"error": f"no chart changed ({main_only and main or 'any'})"}
    ends, how = [], set()
    for name in names:
        drawn = [p for p in rec["plots"] if p["name"] == name and p["fp"] == after.get(name)]
        if drawn:
            ends.append(drawn[0]["paint"])
            how.add("plotly_afterplot")
        elif touched := [d for d in rec["dom"] if name in d["names"] and d["paint"]]:
            ends.append(touched[-1]["paint"])
            how.add("DOM change")
        else:
            return {"error": f"{name} changed but no draw was seen"}
    done = [s["paint"] for s in rec["script"] if s["state"] == "notRunning"]
    t0 = rec["t0"]
    return {
        "paint_ms": max(ends) - t0,
        "script_ms": done[-1] - t0 if done else None,
        "detected_by": " + ".join(sorted(how)),
        "charts": names,
    }


def _settle(page, need_change: tuple | None, first: bool = False) -> None:
    """Until the script ran and stopped, nothing changed for ``QUIET_MS`` and every
    record has its paint time (and, for a head click, the main chart changed).

    Raises:
        TimeoutError: after ``SETTLE_TIMEOUT_S``.
    """
    deadline = time.monotonic() + SETTLE_TIMEOUT_S
    check = """([quiet, first, name, old]) => {
        const B = window.__paint, app = document.querySelector('[data-testid="stApp"]');
        if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
        if (first) return B.charts().length > 0;
        if (B.t0 === null || !(B.script.length || B.plots.length)) return false;
        const all = [...B.plots, ...B.dom, ...B.script];
        if (all.some(r => r.paint === null)) return false;
        const last = Math.max(B.t0, ...all.map(r => r.t));
        if (performance.now() - last < quiet) return false;
        return name === null || B.state()[name] !== old;
    }"""
    name, old = need_change or (None, None)
    while time.monotonic() < deadline:
        if page.evaluate(check, [QUIET_MS, first, name, old]):
            if first:
                page.wait_for_timeout(QUIET_MS)
            return
        page.wait_for_timeout(50)
    raise TimeoutError(f"the page did not settle within {SETTLE_TIMEOUT_S:.0f} s")
