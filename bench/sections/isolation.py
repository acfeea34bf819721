"""Rows and notes of the ``isolation`` section: upload workers and hostile files."""

from __future__ import annotations

from bench.common import BENCH_KINDS as SHIPPED_KINDS
from bench.sections.format import _mp, yes


def _forked(start: dict) -> str:
    """The forked worker's start (``upload/zygote.py``), where the run measured it."""
    if "forked" not in start:
        return ""
    return (
        f"; forked by the zygote (a conversion's or an export's worker, torch imported) "
        f"{_mp(start['forked'])}, the zygote's first, its preload included, "
        f"{start['zygote_first_ms']:,.0f} ms"
    )


def isolation(iso: dict, results: dict) -> list[tuple]:
    """Worker start, the added cost of one analysis, the hostile suite and its peak RSS."""
    out = []
    if start := iso.get("start"):
        n = start["process"]["n"]
        out.append(
            (
                f"Upload worker start, median of {n} (`start()` to its first reply)",
                "reported",
                f"process {_mp(start['process'])}; with `open` of {start['graph']} "
                f"(checks, sessions, trial runs) {_mp(start['process_and_open'])}" + _forked(start),
                "",
            )
        )
    ana = iso.get("analysis", {})
    target = ana.get("target_added_ms")
    for kind in SHIPPED_KINDS:
        if not (s := ana.get(kind)):
            continue
        measured = (
            f"{s['added_ms']:+,.1f} ms: worker {_mp(s['worker'])} vs in process "
            f"{_mp(s['in_process'])}; vs in process with 1 thread ({_mp(s['in_process_1_thread'])}) "
            f"{s['added_ms_vs_1_thread']:+,.1f} ms"
        )
        out.append(
            (
                f"Added cost of one analysis through the worker, {kind}, T = {ana['T']}",
                f"median <= {target:.0f} ms over in process",
                measured,
                yes(s["added_ms"] <= target),
            )
        )
    kinds = [ana[k] for k in SHIPPED_KINDS if k in ana]
    if kinds:
        failed = sum(len(s.get("worker_failures", [])) for s in kinds)
        calls = sum(s.get("worker_calls", s["worker"]["n"]) for s in kinds)
        out.append(
            (
                "Analyses through the worker that failed (worker ended, not timed)",
                "0",
                f"{failed} of {calls}",
                yes(failed == 0),
            )
        )
    if hos := iso.get("hostile"):
        cases = hos["cases"]
        refused = sum(c["refused"] and c["one_line"] for c in cases)
        out.append(
            (
                f"Hostile uploads ({len(cases)}) refused, each with one line",
                f"{len(cases)} of {len(cases)}",
                f"{refused} of {len(cases)}",
                yes(hos["all_refused_one_line"]),
            )
        )
        growth = hos.get("peak_rss_growth_mb")
        out.append(
            (
                "Peak server RSS growth during the hostile suite",
                "reported",
                "n/a" if growth is None else f"{growth:,.1f} MB",
                "",
            )
        )
    return out


def isolation_notes(iso: dict) -> list[str]:
    """What ran where, how RSS was read, and how each hostile upload was refused."""
    out = []
    if ana := iso.get("analysis"):
        out.append(
            "Upload isolation: an uploaded ONNX graph runs in its worker with 1 onnxruntime "
            "thread (the server keeps the other core); the in-process baseline is the same "
            f"graphs opened with `load_graphs` ({iso.get('in_process_threads', '?')}; this "
            f"machine: {iso.get('cores', '?')} cores), and the fair baseline the same "
            "session options as the worker's (1 thread, no arena). An analysis is "
            "`analyze()`: one request for softmax, two (inspect, recurrent) for linear; the "
            f"three run in turn for {ana.get('repeats', '?')} rounds (order rotating)."
        )
        slower = [k for k in SHIPPED_KINDS if ana.get(k, {}).get("added_ms", 0) < 0]
        if slower:
            out.append(
                f"Upload isolation, {' and '.join(slower)}: in process with onnxruntime's "
                "default threads was slower than the 1-thread worker in this run (a linear "
                "analysis runs the step graph once per token: T small runs); the 1-thread "
                "column compares the same session options, so its difference is the cost "
                "of the process boundary alone."
            )
        for kind in SHIPPED_KINDS:
            if failures := ana.get(kind, {}).get("worker_failures"):
                out.append(
                    f"Upload isolation, {kind}: {len(failures)} "
                    f"{'analysis' if len(failures) == 1 else 'analyses'} failed in the "
                    f"worker (dropped from the timings), the first with: {failures[0]}"
                )
    if hos := iso.get("hostile"):
        out.append(f"Upload isolation, hostile suite: peak RSS read as {hos['rss_reading']}.")
        for c in hos["cases"]:
            verdict = "refused" if c["refused"] else "**accepted**"
            growth = c.get("peak_rss_growth_mb")
            out.append(
                f"Hostile upload, {c['name']}: {verdict} at {c['stage']} in "
                f"{c['seconds']:.1f} s"
                + (f' ("{c["error"]}")' if c["error"] else "")
                + ("" if growth is None else f"; peak RSS growth {growth:,.1f} MB")
                + "."
            )
    if "date" in iso and iso.get("loadavg_start") and iso.get("loadavg_end"):
        out.append(
            f"Upload isolation measured {iso['date']} on {iso.get('cpu', '?')} "
            f"({iso.get('cores', '?')} cores; 1-minute load average "
            f"{iso['loadavg_start'][0]:.2f} at start, {iso['loadavg_end'][0]:.2f} at end)."
        )
    return out
