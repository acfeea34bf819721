"""Rows and notes of the ``browser`` section: input to paint in Chromium on a real server
(``bench/browser.py``)."""

from __future__ import annotations

from bench.sections.format import _mp, ms, yes


def browser(br: dict, results: dict) -> list[tuple]:
    """Input to paint in Chromium: a head click, a new sentence."""
    if err := br.get("error"):
        first = err.strip().splitlines()[-1] if err.strip() else err
        return [
            ("Browser: click a head, type a sentence", "runs", f"failed: {first[:200]}", "**no**")
        ]
    targets = br.get("targets", {})
    out = []
    for key, name, target_key in (
        ("head_click", "click a head → the new heatmap painted", "head_click_median_ms"),
        ("sentence", "a new sentence → the view painted", "sentence_median_ms"),
    ):
        s = br.get(key) or {}
        paint, target = s.get("paint"), targets.get(target_key)
        n = paint["n"] if paint else 0
        measured = _mp(paint) if paint else "n/a"
        if paint and s.get("script"):
            measured += f"; script finished at median {ms(s['script']['median_ms'])}"
        if s.get("n_failed"):
            measured += f"; {s['n_failed']} failed"
        out.append(
            (
                f"Browser ({br.get('model', '?')} model): {name} (n = {n})",
                f"median <= {target:.0f} ms",
                measured,
                yes(bool(paint) and not s.get("n_failed") and paint["median_ms"] <= target),
            )
        )
    return out


def browser_notes(br: dict) -> list[str]:
    """How input-to-paint was measured."""
    if br.get("error"):
        return []
    how = sorted(
        {d for k in ("head_click", "sentence") for d in (br.get(k) or {}).get("detected_by", [])}
    )
    return [
        f"Browser: headless Chromium {br.get('chromium', '?')} (Playwright) on a real server, "
        "timed inside the page: from the input event (pointerdown on the head's option; "
        "keydown of the Enter that submits the sentence) to the frame painted after the chart "
        "first held its final figure (detected by "
        f"{', '.join(how) or '?'}; a sentence waits for every chart of the view that changed). "
        "'Script finished' is when the page saw the app's run end. "
        f"Untimed first: {br.get('warmup', 0)} click(s) and sentence(s); sentences of "
        f"{', '.join(map(str, sorted(set(br.get('sentence_tokens', [])))))} tokens."
    ]


def classroom(cl: dict, results: dict) -> list[tuple]:
    """In class (#21): a click on a heatmap cell, a lecture step, presenter mode's cost."""
    if err := cl.get("error"):
        first = err.strip().splitlines()[-1] if err.strip() else err
        return [("Browser: click a cell, a lecture step, presenter mode", "runs",
                 f"failed: {first[:200]}", "**no**")]  # fmt: skip
    targets, out = cl.get("targets", {}), []
    model = cl.get("model", "?")
    for key, name, target_key in (
        ("cell_click", "click a heatmap cell → the row bars painted", "cell_click_median_ms"),
        ("lecture_step", "lecture path, Next or Previous → the step painted",
         "lecture_step_median_ms"),
    ):  # fmt: skip
        s = cl.get(key) or {}
        paint, target = s.get("paint"), targets.get(target_key)
        measured = _mp(paint) if paint else "n/a"
        if s.get("n_failed"):
            measured += f"; {s['n_failed']} failed"
        base = (cl.get("head_click_same_run") or {}).get("paint")
        if key == "cell_click" and base:
            measured += f"; a head click in the same run: median {ms(base['median_ms'])}"
        ok = bool(paint) and not s.get("n_failed") and paint["median_ms"] <= target
        out.append((f"Browser ({model} model): {name} (n = {paint['n'] if paint else 0})",
                    f"median <= {target:.0f} ms", measured, yes(ok)))  # fmt: skip
    if pr := cl.get("presenter"):
        off, on = pr["off"], pr["on"]
        n = on["rerun"]["n"]
        out.append(
            (
                f"Presenter mode: a head change's rerun on the server, present=1 vs off "
                f"(n = {n} each, alternating)",
                f"no server time added (median within +{targets['presenter_extra_ratio']:.0%} "
                f"or +{targets['presenter_extra_ms']:.0f} ms)",
                f"median {ms(on['rerun']['median_ms'])} vs {ms(off['rerun']['median_ms'])}; "
                f"server CPU {on['cpu_per_rerun_ms']:.1f} vs {off['cpu_per_rerun_ms']:.1f} "
                "ms per rerun",
                yes(_presenter_met(pr, targets)),
            )
        )
    return out


def _presenter_met(pr: dict, targets: dict) -> bool:
    off, on = pr["off"]["rerun"]["median_ms"], pr["on"]["rerun"]["median_ms"]
    return on <= off + max(targets["presenter_extra_ms"], targets["presenter_extra_ratio"] * off)


def classroom_notes(cl: dict) -> list[str]:
    """How the classroom rows were measured."""
    if cl.get("error"):
        return []
    return [
        f"In class (#21): the same probe in headless Chromium {cl.get('chromium', '?')}: a "
        f"click (pointerdown) on column 0 of another row of the attention heatmap of a "
        f"{cl.get('tokens', '?')}-token sentence, to the frame painted after the chart "
        "held the new row's bars (each followed by a head click timed as the browser rows "
        "time it: on a loaded machine compare the two); Next / Previous on the lecture path (walking to the last "
        "step and back, every step's figure built the first time it is shown), to every "
        "new chart of the step painted (a step without a Plotly chart: the last DOM change "
        "of its figure). Presenter mode is measured on the server: two websocket sessions "
        "(bench/stclient.py) of the same link, one with present=1, change the head in "
        "turn; each rerun is timed from its BackMsg to script_finished, the server's CPU "
        f"read around each. Untimed first: {cl.get('warmup', 0)} of each."
    ]
