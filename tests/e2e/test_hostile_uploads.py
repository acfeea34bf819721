"""Issue #9: a hostile upload must never crash, freeze or bloat the server a whole
classroom shares.

One real ``streamlit run`` server (the session ``server`` fixture) and one Chromium with
two browser contexts, run at the same time:

* context A (one student) uploads every case of ``tests/helpers/hostile_gen.py`` in
  turn through the sidebar's "Inspect your own model" uploader and clicks "Load
  uploaded model" (in one session; a fresh page after a case that left it stuck);
* context B (another student) meanwhile keeps typing new sentences into the shipped
  softmax model and measures in the page how long each answer takes: from the key
  press to the moment the main heatmap's data changes.

Before A starts, B answers BASELINE_ANSWERS sentences alone: their median is what B's own
page takes to draw an answer on this machine now (~0.7 s on a quiet 2-core machine, where
the browser shares the cores with the server; more on a busy one), which A cannot change.

Asserted: A's uploads delay none of B's answers by more than ANSWER_LIMIT_S (issue #9's
figure) over that median; A sees exactly one error line
("Not loaded: …", one line, no traceback, no exception element, no spinner or progress
bar left, the script finished) for every case (a graph that behaves at the trial lengths
is accepted; its worker then fails the one sentence that sets it off, with one "This
model failed on this input: …" line) and can then still analyse a sentence
with the shipped model; the server process is alive at the end; and its RSS grew by
less than RSS_GROWTH_LIMIT over the whole run.

Everything that was measured is written to ``SCREENSHOTS/hostile_uploads.json`` and
printed as a table in the failure message. ``HOSTILE_CASES=name,name`` runs a subset
(to see what one case does to a fresh server).
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import threading
import time

import psutil
import pytest

from tests.helpers.browser import CHROMIUM, CHROMIUM_ARGS, SCREENSHOTS, TIMEOUT_MS
from tests.helpers.hostile_gen import all_cases, write_case
from upload.limits import CONVERT_TIMEOUT_S, WAIT_FACTOR

ANSWER_LIMIT_S = 2.0  # B: no answer more than this over B's baseline median (issue #9)
BASELINE_ANSWERS = 5  # B's answers before A starts
# Measured on the 2-core machine (AMD EPYC), 2026-11-26: B's baseline median 0.7 s, its
# slowest answer during A's uploads 2.3 s of 44 (the first answer of a case, while the
# server takes A's upload). A's workers run at SCHED_IDLE and take no CPU from B's session.
ANSWER_CAP_S = 20.0  # B: give up waiting for one answer after this (recorded as missing)
# A: one upload's answer ("Not loaded: …") within this. The upload's worker runs at
# SCHED_IDLE, so on a machine busy with other work it may wait for a CPU: up to
# WAIT_FACTOR times its CPU budget (CONVERT_TIMEOUT_S: the app's 60 s, `make test`'s 30 s;
# upload/client.py) before it says so in one line.
CASE_TIMEOUT_S = WAIT_FACTOR * CONVERT_TIMEOUT_S + 20.0
ANALYSE_TIMEOUT_S = 20.0  # A: afterwards, a sentence with the shipped model within this
RSS_GROWTH_LIMIT = 100 * 2**20  # bytes, over the whole run
B_PAUSE_S = 0.2  # between two of B's sentences
B_SENTENCES = [
    "the cat sat on the mat",
    "a bird is on the old tree",
    "the keys to the cabinet are on the table",
    "mary gave a drink to john",
]
MODEL_FAILED = "This model failed on this input:"  # an accepted upload failing one sentence
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'

# The main heatmap's token axis: it changes exactly when a new answer has been drawn.
SIGNATURE_JS = """() => {
  const el = document.querySelector('.js-plotly-plot');
  const d = el && el.data && el.data[0];
  return d ? JSON.stringify(d.x) : null;
}"""

# Resolves with the milliseconds from window.__t0 (set just before the key press) to the
# first signature different from `before`, or null after `capMs`.
MEASURE_JS = """([before, capMs]) => new Promise(resolve => {
  const t0 = window.__t0;
  const sig = () => {
    const el = document.querySelector('.js-plotly-plot');
    const d = el && el.data && el.data[0];
    return d ? JSON.stringify(d.x) : null;
  };
  let observer = null, poll = null, timer = null, finished = false;
  const done = value => {
    if (finished) return;
    finished = true;
    if (observer) observer.disconnect();
    clearInterval(poll);
    clearTimeout(timer);
    resolve(value);
  };
  const check = () => {
    const s = sig();
    if (s !== null && s !== before) done(performance.now() - t0);
  };
  observer = new MutationObserver(check);
  observer.observe(document.body, {subtree: true, childList: true, attributes: true,
                                   characterData: true});
  poll = setInterval(check, 25);
  timer = setTimeout(() => done(null), Math.max(0, capMs - (performance.now() - t0)));
  check();
})"""

# What a student sees now: live (not stale) alerts, exceptions, spinners, progress bars.
SNAPSHOT_JS = """() => {
  const live = sel => [...document.querySelectorAll(sel)]
    .filter(e => !e.closest('[data-stale="true"]'));
  const app = document.querySelector('[data-testid="stApp"]');
  return {
    state: app ? app.dataset.testScriptState : null,
    alerts: live('[data-testid="stAlert"]').map(e => e.innerText.trim()),
    exceptions: live('[data-testid="stException"]').map(e => e.innerText.slice(0, 300)),
    spinners: live('[data-testid="stSpinner"]').length,
    progress: live('[data-testid="stProgress"]').length,
    // the model radio is bound to the URL: an upload that loaded is selected there
    uploaded: new URLSearchParams(location.search).get('model') === 'upload',
  };
}"""


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _rss(pid: int) -> int | None:
    try:
        return psutil.Process(pid).memory_info().rss
    except psutil.NoSuchProcess:
        return None


class Run:
    """Shared state of the two students and the RSS sampler."""

    def __init__(self, pid: int):
        self.pid = pid
        self.case: str | None = "warm-up"
        self.answers: list[dict] = []  # B: {"case", "text", "s" (None: none), "at"}
        self.results: list[dict] = []  # A: one per case
        self.peaks: dict[str, int] = {}  # RSS peak while each case ran
        self.stopped = ""  # why A stopped before the last case
        self.setup: dict[str, float] = {}  # when the browser, pages and warm-up were ready
        self.stop = asyncio.Event()
        self.t0 = time.monotonic()

    def now(self) -> float:
        """Seconds since the run started (timestamps in the JSON report)."""
        return round(time.monotonic() - self.t0, 2)


async def _wait_idle(page, timeout_s: float) -> None:
    for _ in range(2):
        await page.wait_for_selector(IDLE, timeout=timeout_s * 1000)
        await page.wait_for_timeout(300)
    await page.wait_for_selector(IDLE, timeout=timeout_s * 1000)


async def _ask(page, text: str, cap_s: float) -> float | None:
    """Type ``text``, press Ctrl+Enter; seconds until the main heatmap changed (None: not
    within ``cap_s``), measured in the page."""
    before = await page.evaluate(SIGNATURE_JS)
    box = page.get_by_role("textbox", name="Type a sentence")
    await box.fill(text, timeout=cap_s * 1000)
    await page.evaluate("() => { window.__t0 = performance.now(); }")
    await box.press("Control+Enter", timeout=cap_s * 1000)
    ms = await page.evaluate(MEASURE_JS, [before, cap_s * 1000])
    return None if ms is None else ms / 1000


async def _trigger(page, text: str, run: Run) -> dict:
    """Type the sentence that sets a loaded upload's harm off; what A then sees (the
    alerts once the script is idle), or the outcome if it never settles."""
    box = page.get_by_role("textbox", name="Type a sentence")
    await box.fill(text, timeout=ANSWER_CAP_S * 1000)
    await box.press("Control+Enter", timeout=ANSWER_CAP_S * 1000)
    await page.wait_for_timeout(500)
    deadline = time.monotonic() + CASE_TIMEOUT_S
    while time.monotonic() < deadline and _alive(run.pid):
        snap = await page.evaluate(SNAPSHOT_JS)
        failed = [a for a in snap["alerts"] if MODEL_FAILED in a]
        if snap["state"] == "notRunning" and failed:
            return {**snap, "outcome": "failed on that sentence"}
        await asyncio.sleep(0.3)
    return {"outcome": "no answer", "alerts": []}


async def _settle(page, run: Run, timeout_s: float) -> dict:
    """Poll what A sees until the upload has an answer and the script is idle (twice,
    300 ms apart), the server died, or ``timeout_s`` passed."""
    deadline = time.monotonic() + timeout_s
    last, steady = None, 0
    while time.monotonic() < deadline:
        if not _alive(run.pid):
            return {**(last or {}), "outcome": "server died"}
        try:
            snap = await page.evaluate(SNAPSHOT_JS)
        except Exception as exc:  # noqa: BLE001 - a broken page is an outcome too
            return {**(last or {}), "outcome": f"page broke: {type(exc).__name__}"}
        answered = any("Not loaded:" in a for a in snap["alerts"]) or snap["uploaded"]
        answered = answered or bool(snap["exceptions"])
        steady = steady + 1 if snap["state"] == "notRunning" and answered else 0
        last = snap
        if steady >= 2:
            return {**snap, "outcome": "loaded" if snap["uploaded"] else "answered"}
        await asyncio.sleep(0.3)
    return {**(last or {}), "outcome": f"no answer within {timeout_s:g} s"}


async def _student_b(page, run: Run) -> None:
    i = 0
    while not run.stop.is_set():
        case = run.case
        text = f"{B_SENTENCES[i % len(B_SENTENCES)]} {i}"
        try:
            seconds = await _ask(page, text, ANSWER_CAP_S)
        except Exception as exc:  # noqa: BLE001 - recorded as a missing answer
            seconds = None
            text += f" ({type(exc).__name__})"
        run.answers.append({"case": case, "text": text, "s": seconds, "at": run.now()})
        i += 1
        await asyncio.sleep(B_PAUSE_S)


async def _sample_rss(run: Run) -> None:
    while not run.stop.is_set():
        rss = _rss(run.pid)
        if rss is not None and run.case:
            run.peaks[run.case] = max(run.peaks.get(run.case, 0), rss)
        await asyncio.sleep(0.2)


async def _open_page(context, url: str):
    """A new page (a new Streamlit session) on the visualizer, answered once."""
    page = await context.new_page()
    await page.goto(url)
    await _wait_idle(page, 60)
    await page.wait_for_selector(".js-plotly-plot")
    return page


async def _open_uploader(page) -> None:
    summary = page.locator("summary", has_text="Inspect your own model")
    if not await page.locator("details", has=summary).evaluate("d => d.open"):
        await summary.click()


async def _one_case(page, case, paths, run: Run, n: int) -> dict:
    """Upload ``case`` in ``page``, see what A sees, remove the files again, then analyse
    a sentence with the shipped model."""
    result: dict = {"case": case.name, "harm": case.harm, "at": {"start": run.now()}}
    try:
        await _open_uploader(page)
        await page.locator('[data-testid="stFileUploader"] input[type=file]').set_input_files(
            [str(p) for p in paths]
        )
        result["at"]["files set"] = run.now()
        await page.get_by_role("button", name="Load uploaded model").click(timeout=20_000)
        result["at"]["clicked"] = run.now()
        t0 = time.monotonic()
        result.update(await _settle(page, run, CASE_TIMEOUT_S))
        result["upload_s"] = round(time.monotonic() - t0, 1)
        if result["outcome"] == "loaded" and case.trigger and _alive(run.pid):
            # Accepted (it behaves at the trial lengths): set the harm off as a student would.
            result["trigger"] = await _trigger(page, case.trigger, run)
        if result["outcome"] == "loaded" and _alive(run.pid):
            radio = page.locator('[data-testid="stRadio"] label', has_text="softmax")
            await radio.click(timeout=ANSWER_CAP_S * 1000)  # back to a shipped model
        result["at"]["settled"] = run.now()
        if _alive(run.pid):
            chips = page.locator('[data-testid="stFileChipDeleteBtn"] button')
            while await chips.count():  # uploads add to the list: remove this case's files
                await chips.first.click(timeout=5000)  # (which also frees them on the server)
                await page.wait_for_timeout(100)
            result["analyse_s"] = await _ask(page, f"the dog sat on the mat {n}", ANALYSE_TIMEOUT_S)
        result["at"]["analysed"] = run.now()
    except Exception as exc:  # noqa: BLE001 - recorded; the table shows it
        result.setdefault("outcome", "error")
        result["error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
    result["alive"] = _alive(run.pid)
    return result


async def _student_a(page, context, url: str, cases, folders, run: Run) -> None:
    """Every case in turn, in one session while they end cleanly; a case that leaves its
    session stuck or broken is followed by a fresh page."""
    for n, case in enumerate(cases):
        run.case = case.name
        result = await _one_case(page, case, folders[case.name], run, n)
        run.results.append(result)
        if not result["alive"]:
            run.stopped = f"the server died during {case.name}"
            break
        if result["outcome"] != "answered" or result.get("analyse_s") is None or "error" in result:
            await page.close()
            try:
                page = await _open_page(context, url)
            except Exception as exc:  # noqa: BLE001 - the server no longer answers new sessions
                run.stopped = f"no new page after {case.name}: {type(exc).__name__}"
                break
    await page.close()
    run.case = None


async def _scenario(url: str, cases, folders, run: Run) -> dict:
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        context_a = await browser.new_context(viewport={"width": 1500, "height": 1100})
        context_b = await browser.new_context(viewport={"width": 1500, "height": 1100})
        for context in (context_a, context_b):  # Playwright's 30 s, scaled to the machine
            context.set_default_timeout(TIMEOUT_MS)
        run.setup["browser"] = run.now()
        page_b, page_a = await asyncio.gather(
            _open_page(context_b, url), _open_page(context_a, url)
        )
        run.setup["pages"] = run.now()
        await _ask(page_b, "the warm cat sat", 30)  # the first answer is slower
        run.setup["warm"] = run.now()
        run.case = "alone"
        for i in range(BASELINE_ANSWERS):  # B alone: what its own page takes to draw
            s = await _ask(page_b, f"{B_SENTENCES[i % len(B_SENTENCES)]} alone {i}", 30)
            run.answers.append({"case": run.case, "text": "", "s": s, "at": run.now()})
        baseline = _rss(run.pid)
        run.case = "baseline"
        sampler = asyncio.create_task(_sample_rss(run))
        typist = asyncio.create_task(_student_b(page_b, run))
        await _student_a(page_a, context_a, url, cases, folders, run)
        await asyncio.sleep(1)
        run.stop.set()
        await asyncio.gather(typist, sampler)
        end = _rss(run.pid) if _alive(run.pid) else None
        await browser.close()
    return {"baseline_rss": baseline, "end_rss": end}


def _table(run: Run, cases) -> str:
    rows = [
        f"{'case':32} {'A saw':60} {'up s':>6} {'A ok s':>6} {'B max s':>7} {'B miss':>6} "
        f"{'RSS peak MB':>11} alive"
    ]
    by_case = {r["case"]: r for r in run.results}
    for case in cases:
        r = by_case.get(case.name)
        answers = [a for a in run.answers if a["case"] == case.name]
        got = [a["s"] for a in answers if a["s"] is not None]
        b_max = f"{max(got):.2f}" if got else "-"
        missing = sum(a["s"] is None for a in answers)
        peak = run.peaks.get(case.name)
        if r is None:
            rows.append(f"{case.name:32} not run ({run.stopped})")
            continue
        seen = r["outcome"]
        if r.get("exceptions"):
            seen += " + exception"
        alerts = [a.replace("\n", " | ") for a in r.get("alerts", [])]
        if alerts:
            seen += ": " + " / ".join(alerts)
        if "error" in r:
            seen += f" [{r['error']}]"
        analyse = r.get("analyse_s")
        rows.append(
            f"{case.name:32} {seen[:60]:60} {r.get('upload_s', '-')!s:>6} "
            f"{'-' if analyse is None else f'{analyse:.2f}':>6} {b_max:>7} {missing:>6} "
            f"{'-' if peak is None else f'{peak / 2**20:.0f}':>11} {r['alive']}"
        )
    return "\n".join(rows)


def _problems(run: Run, cases, rss: dict) -> list[str]:
    problems = []
    by_case = {r["case"]: r for r in run.results}
    for case in cases:
        r = by_case.get(case.name)
        if r is None:
            problems.append(f"{case.name}: not run ({run.stopped})")
            continue
        if not r["alive"]:
            problems.append(f"{case.name}: the server died")
            continue
        errors = [a for a in r.get("alerts", []) if "Not loaded:" in a]
        if case.trigger and r["outcome"] == "loaded":  # accepted: the harm is one sentence's
            alerts = r.get("trigger", {}).get("alerts", [])
            errors = [a[a.index(MODEL_FAILED) :] for a in alerts if MODEL_FAILED in a]
            if len(errors) != 1 or "\n" in errors[0]:  # (an alert's icon comes before it)
                problems.append(f"{case.name}: its sentence gave {r.get('trigger')!r:.300}")
        elif r["outcome"] != "answered" or len(errors) != 1:
            problems.append(f"{case.name}: A saw {r['outcome']} with {len(errors)} 'Not loaded:'")
        elif not errors[0].startswith("Not loaded:") or "\n" in errors[0]:
            problems.append(f"{case.name}: the error is not one line: {errors[0][:300]!r}")
        if any("Traceback" in a for a in r.get("alerts", [])):
            problems.append(f"{case.name}: a traceback is shown")
        if r.get("exceptions") or r.get("spinners") or r.get("progress"):
            problems.append(f"{case.name}: exception, spinner or progress bar left on the page")
        if r.get("analyse_s") is None:
            problems.append(f"{case.name}: A could not analyse a sentence afterwards")
    alone = [a["s"] for a in run.answers if a["case"] == "alone"]
    if None in alone or not alone:
        problems.append(f"B alone did not get every answer: {alone}")
        alone = [a for a in alone if a is not None] or [0.0]
    limit = ANSWER_LIMIT_S + statistics.median(alone)
    during = [a for a in run.answers if a["case"] not in ("alone", "warm-up")]
    slow = [a for a in during if a["s"] is None or a["s"] > limit]
    if slow:
        worst = ", ".join(f"{a['case']}: {_seconds(a['s'])}" for a in slow[:8])
        problems.append(
            f"B waited longer than {limit:.2f} s ({ANSWER_LIMIT_S:g} s over its median alone, "
            f"{statistics.median(alone):.2f} s) for {len(slow)} of {len(during)} answers ({worst})"
        )
    if len(during) < len(cases):
        problems.append(f"B got only {len(during)} answers in {len(cases)} cases")
    growth = _growth(rss)
    if not _alive(run.pid):
        problems.append("the server process is gone")
    elif growth is None or growth >= RSS_GROWTH_LIMIT:
        problems.append(f"the server's RSS grew by {_megabytes(growth)} (limit 100 MB)")
    return problems


def _seconds(s: float | None) -> str:
    return "no answer" if s is None else f"{s:.1f} s"


def _megabytes(n: float | None) -> str:
    return "?" if n is None else f"{n / 2**20:.0f} MB"


def _growth(rss: dict) -> int | None:
    if rss.get("end_rss") is None or rss.get("baseline_rss") is None:
        return None
    return rss["end_rss"] - rss["baseline_rss"]


@pytest.fixture(scope="module")
def hostile_cases(digits_export, tmp_path_factory):
    """Every hostile case, generated once for this module and written to disk:
    (cases, case name -> paths)."""
    _, folder = digits_export
    cases = all_cases((folder / "digits.inspect.onnx").read_bytes())
    only = os.environ.get("HOSTILE_CASES")
    if only:
        cases = [c for c in cases if c.name in only.split(",")]
    root = tmp_path_factory.mktemp("hostile")
    return cases, {c.name: write_case(c, root / c.name) for c in cases}


def test_hostile_uploads_leave_the_server_serving(server, hostile_cases):
    cases, folders = hostile_cases
    run = Run(server.pid)
    outcome: dict = {}

    def scenario() -> None:  # its own thread: the sync Playwright fixtures own this one's loop
        try:
            outcome.update(asyncio.run(_scenario(server.url, cases, folders, run)))
        except BaseException as exc:  # noqa: BLE001 - re-raised below, in the test's thread
            outcome["error"] = exc

    started = time.monotonic()
    thread = threading.Thread(target=scenario)
    thread.start()
    thread.join()
    wall = time.monotonic() - started
    if "error" in outcome:
        raise outcome["error"]
    table = _table(run, cases)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    (SCREENSHOTS / "hostile_uploads.json").write_text(
        json.dumps(
            {
                "wall_s": round(wall, 1),
                "rss_growth": _megabytes(_growth(outcome)),
                **outcome,
                "stopped": run.stopped,
                "setup": run.setup,
                "results": run.results,
                "answers": run.answers,
                "peaks_mb": {k: round(v / 2**20) for k, v in run.peaks.items()},
            },
            indent=1,
        )
    )
    problems = _problems(run, cases, outcome)
    summary = f"wall {wall:.0f} s, server RSS growth {_megabytes(_growth(outcome))}"
    assert not problems, (
        "\n".join(problems) + f"\n\n{table}\n{summary}\n\nserver log:\n{server.log()[-3000:]}"
    )
