"""Markdown rows ``(benchmark, target, measured, met)`` and notes, one pair per section.

Used by ``bench/report.py`` (the sections that drive a real server are in
``bench/sections_live.py``). Each ``<section>(data, results)`` reads that section of
``results.json``; each ``<section>_notes(data)`` returns sentences for under the table.
Sections written by older versions of the suite render too (missing fields say n/a).
"""

from __future__ import annotations

NAN = float("nan")
KV_BASELINE = (
    "naive: the ONNX graph grows K and V with Concat every token and "
    "the whole cache makes a round trip through numpy per step (on CUDA it stays on "
    "the GPU through I/O binding), so each token also copies O(P) floats in and out"
)


def yes(flag) -> str:
    """``yes``, ``**no**`` or ``n/a`` (None)."""
    return "n/a" if flag is None else ("yes" if flag else "**no**")


def ms(x: float | None) -> str:
    """Milliseconds with a sensible number of digits (``n/a`` for None)."""
    if x is None:
        return "n/a"
    return f"{x:,.1f} ms" if x >= 1 else f"{x:.3f} ms"


def _mp(stats: dict | None) -> str:
    stats = stats or {}
    return f"median {ms(stats.get('median_ms'))}, p95 {ms(stats.get('p95_ms'))}"


median_p95 = _mp  # "median X ms, p95 Y ms" of a summarize() dict, for bench/sections_live.py


def latency(lat: dict, results: dict) -> list[tuple]:
    """One row per model and T: total (arrays + every view's figures and JSON) vs target."""
    out, target = [], lat["target_ms"]
    for kind in ("softmax", "linear"):
        for T, s in lat.get(kind, {}).items():
            name = f"App latency (all views), {kind}, T = {T}"
            if "total" not in s:  # older runs timed the arrays only
                measured = f"{_mp(s)}; figures not timed in this run"
                name = f"App latency (arrays only), {kind}, T = {T}"
                out.append((name, f"median <= {target:.0f} ms", measured, "n/a"))
                continue
            total, arrays, views = s["total"], s["arrays"], s["views"]
            measured = (
                f"total {_mp(total)} = arrays {ms(arrays['median_ms'])} + "
                f"figures & JSON {ms(views['median_ms'])} (medians)"
            )
            met = total["median_ms"] <= target
            out.append((name, f"median <= {target:.0f} ms", measured, yes(met)))
            if one := slowest_view(s):
                view, view_ms = one
                out.append(
                    (
                        f"App latency (the view on screen, slowest: {view}), {kind}, T = {T}",
                        "reported",
                        f"about {ms(arrays['median_ms'] + view_ms)} = arrays "
                        f"{ms(arrays['median_ms'])} + {view} figures {ms(view_ms)} "
                        "(sum of per-builder medians)",
                        "",
                    )
                )
    return out


def slowest_view(s: dict) -> tuple[str, float] | None:
    """(view, ms) of the view whose figures cost most, from ``builders_ms`` keyed
    ``"<view>: <builder>"``; a rerun of the app draws only the view on screen."""
    per_view: dict[str, float] = {}
    for key, value in s.get("builders_ms", {}).items():
        view = key.split(":", 1)[0]
        per_view[view] = per_view.get(view, 0.0) + value
    return max(per_view.items(), key=lambda kv: kv[1]) if per_view else None


def latency_notes(lat: dict) -> list[str]:
    """Which builder dominates the figure time."""
    out = []
    for kind, s in lat.get("slowest_builder", {}).items():
        T = str(s["T"])
        share = s["median_ms"] / lat[kind][T]["total"]["median_ms"]
        out.append(
            f"App latency, {kind}, T = {T}: the slowest item is `{s['builder']}` "
            f"({ms(s['median_ms'])}, {share:.0%} of the total); per-builder medians are "
            "in results.json (`latency.<model>.<T>.builders_ms`)."
        )
    return out


def inference(inf: dict, results: dict) -> list[tuple]:
    """onnxruntime vs PyTorch eager, labelled with the devices compared."""
    out = []
    provider = results.get("machine", {}).get("provider_active")
    default = "onnxruntime CPU vs PyTorch CPU" if provider != "CUDAExecutionProvider" else "?"
    for kind in ("softmax", "linear"):
        if s := inf.get(kind):
            label = s.get("comparison", default)
            out.append(
                (
                    f"{label} (eager), {kind}, T = {inf['T']}",
                    f">= {inf['target_speedup']}x faster",
                    f"{s['speedup']:.2f}x ({ms(s['onnxruntime']['median_ms'])} vs "
                    f"{ms(s['torch_eager']['median_ms'])}, medians)",
                    yes(s["speedup"] >= inf["target_speedup"]),
                )
            )
    return out


def scaling(sc: dict, results: dict) -> list[tuple]:
    """Log-log slopes, and the softmax / linear ratio with its spread."""
    out = []
    if lin := sc.get("linear"):
        ok = lin["slope"] is not None and lin["slope"] <= sc["target_linear_slope"]
        slope = "n/a" if lin["slope"] is None else f"{lin['slope']:.2f}"
        name = f"Linear fast graph, log-log slope, T = {lin['T'][0]}..{lin['T'][-1]}"
        out.append((name, f"<= {sc['target_linear_slope']}", slope, yes(ok)))
    if (sm := sc.get("softmax")) and sm["slope"] is not None:
        out.append(("Softmax fast graph, log-log slope", "reported", f"{sm['slope']:.2f}", ""))
    if "ratio" in sc:
        i = sc["softmax"]["T"].index(sc["ratio_T"])
        measured = f"{sc['ratio']:.1f}x"
        if spread := sc.get("ratio_p10_p90"):
            measured += f" (per-round ratios p10–p90: {spread[0]:.1f}–{spread[1]:.1f}x)"
        soft, lin = sc["softmax"], sc["linear"]
        measured += (
            f"; softmax {ms(soft['median_ms'][i])} (p95 {ms(soft['p95_ms'][i])}) vs "
            f"linear {ms(lin['median_ms'][i])} (p95 {ms(lin['p95_ms'][i])})"
        )
        target = sc["target_ratio"]
        out.append(
            (
                f"Softmax time / linear time, T = {sc['ratio_T']}",
                f">= {target}x",
                measured,
                yes(sc["ratio"] >= target),
            )
        )
    return out


def scaling_notes(sc: dict) -> list[str]:
    """How the ratio was measured."""
    if "ratio_p10_p90" not in sc:
        return []
    lo, hi = sc["ratio_p10_p90"]
    target = sc["target_ratio"]
    if lo >= target:
        verdict = "even the p10 of the per-round ratios meets the target"
    elif hi < target:
        verdict = "even the p90 of the per-round ratios misses the target"
    else:
        verdict = "the target lies inside the p10–p90 spread of the per-round ratios (noise)"
    return [
        "Scaling: softmax and linear calls alternate at every T (one round = one call "
        f"each); at T = {sc['ratio_T']}, {verdict}."
    ]


def generation(gen: dict, results: dict) -> list[tuple]:
    """Linear step vs softmax recomputation (target) and vs the key/value cache (reported)."""
    n = gen["n_new"]
    return [
        (
            f"Generate {n}: linear step vs softmax recomputing the prefix",
            f">= {gen['target_vs_recompute']:.0f}x",
            f"{gen['speedup_vs_recompute']:.1f}x",
            yes(gen["met"]),
        ),
        (
            f"Generate {n}: linear step vs softmax with a naive key/value cache",
            "reported",
            f"{gen['speedup_vs_kv_cache']:.2f}x",
            "",
        ),
    ]


def generation_notes(gen: dict) -> list[str]:
    """Both baselines, named."""
    return [
        "Generation baselines: recomputation reruns the softmax fast graph on the whole "
        f"prefix for every token; the key/value cache is {KV_BASELINE}."
    ]


def memory(mem: dict, results: dict) -> list[tuple]:
    """Carried bytes (analytic) and the measured peak RSS growth, as separate rows."""
    n = mem["length"][-1]
    out = [
        (
            f"Carried memory at {n} tokens, state vs KV cache (analytic)",
            "reported",
            f"{mem['state_bytes'][-1] / 1e3:,.1f} kB vs {mem['kv_cache_bytes'][-1] / 1e6:,.2f} MB",
            "",
        )
    ]
    measured = mem.get("measured_peak_rss_mb", {})
    lin, kv = measured.get("linear_recurrent") or [None], measured.get("softmax_kv_cache") or [None]
    # 0 and 0: the run was served from memory the process already held (freed by earlier
    # sections), so the high-water mark could not show it: no measurement, not "0 MB".
    if lin[-1] is not None and kv[-1] is not None and (lin[-1] > 0 or kv[-1] > 0):
        out.append(
            (
                f"Peak RSS growth generating {n} tokens, state vs KV cache (measured)",
                "reported",
                f"{lin[-1]:,.2f} MB vs {kv[-1]:,.2f} MB",
                "",
            )
        )
    return out


def memory_notes(mem: dict) -> list[str]:
    """Which memory rows are formulas and which are measurements."""
    measured = mem.get("measured_peak_rss_mb", {})
    lin, kv = measured.get("linear_recurrent") or [None], measured.get("softmax_kv_cache") or [None]
    unmeasured = (
        [
            "The measured peak RSS growth was 0 for both methods: the process already held "
            "enough freed memory from earlier sections, so its high-water mark did not move "
            "and the row is left out (the analytic row stands)."
        ]
        if lin[-1] == 0 and kv[-1] == 0
        else []
    )
    return unmeasured + [
        "Carried memory rows are analytic (formulas, not measurements): recurrent state "
        "L·H·d·(d+1)·4 bytes at any length, key/value cache 2·L·H·P·d·4 bytes after P "
        "tokens. The measured row is the whole process's peak RSS growth during one "
        "generation run: it includes onnxruntime's arena and the cache's copies, so it "
        "only means something at the longest length (below that it is allocator noise)."
    ]


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
                f"(checks, sessions, trial runs) {_mp(start['process_and_open'])}",
                "",
            )
        )
    ana = iso.get("analysis", {})
    target = ana.get("target_added_ms")
    for kind in ("softmax", "linear"):
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
    kinds = [ana[k] for k in ("softmax", "linear") if k in ana]
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
        slower = [k for k in ("softmax", "linear") if ana.get(k, {}).get("added_ms", 0) < 0]
        if slower:
            out.append(
                f"Upload isolation, {' and '.join(slower)}: in process with onnxruntime's "
                "default threads was slower than the 1-thread worker in this run (a linear "
                "analysis runs the step graph once per token: T small runs); the 1-thread "
                "column compares the same session options, so its difference is the cost "
                "of the process boundary alone."
            )
        for kind in ("softmax", "linear"):
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
