"""Render ``results.json`` as the markdown summary the README includes (target, measured, met?)."""

from __future__ import annotations

import json
from pathlib import Path


def _yes(flag) -> str:
    return "n/a" if flag is None else ("yes" if flag else "**no**")


def _ms(x: float) -> str:
    return f"{x:,.1f} ms" if x >= 1 else f"{x:.3f} ms"


def rows(results: dict) -> list[tuple[str, str, str, str]]:
    """``(benchmark, target, measured, met)`` rows for every section present."""
    out = []
    if lat := results.get("latency"):
        for kind in ("softmax", "linear"):
            for T, s in lat.get(kind, {}).items():
                ok = s["median_ms"] <= lat["target_ms"]
                out.append(
                    (
                        f"App latency, {kind}, T = {T}",
                        f"median <= {lat['target_ms']:.0f} ms",
                        f"median {_ms(s['median_ms'])}, p95 {_ms(s['p95_ms'])}",
                        _yes(ok),
                    )
                )
    if inf := results.get("inference"):
        for kind in ("softmax", "linear"):
            if s := inf.get(kind):
                out.append(
                    (
                        f"onnxruntime vs PyTorch eager, {kind}, T = {inf['T']}",
                        f">= {inf['target_speedup']}x faster",
                        f"{s['speedup']:.2f}x ({_ms(s['onnxruntime']['median_ms'])} vs "
                        f"{_ms(s['torch_eager']['median_ms'])})",
                        _yes(s["speedup"] >= inf["target_speedup"]),
                    )
                )
    if sc := results.get("scaling"):
        if lin := sc.get("linear"):
            lo, hi = lin["T"][0], lin["T"][-1]
            ok = lin["slope"] is not None and lin["slope"] <= sc["target_linear_slope"]
            out.append(
                (
                    f"Linear fast graph, log-log slope, T = {lo}..{hi}",
                    f"<= {sc['target_linear_slope']}",
                    f"{lin['slope']:.2f}",
                    _yes(ok),
                )
            )
        if sm := sc.get("softmax"):
            out.append(("Softmax fast graph, log-log slope", "reported", f"{sm['slope']:.2f}", ""))
        if "ratio" in sc:
            out.append(
                (
                    f"Softmax time / linear time, T = {sc['ratio_T']}",
                    f">= {sc['target_ratio']}x",
                    f"{sc['ratio']:.1f}x",
                    _yes(sc["ratio"] >= sc["target_ratio"]),
                )
            )
    if gen := results.get("generation"):
        n = gen["n_new"]
        out.append(
            (
                f"Generate {n}: linear step vs softmax recomputing the prefix",
                f">= {gen['target_vs_recompute']:.0f}x",
                f"{gen['speedup_vs_recompute']:.1f}x",
                _yes(gen["met"]),
            )
        )
        out.append(
            (
                f"Generate {n}: linear step vs softmax with a key/value cache",
                "reported",
                f"{gen['speedup_vs_kv_cache']:.2f}x",
                "",
            )
        )
    if mem := results.get("memory"):
        n = mem["length"][-1]
        out.append(
            (
                f"Carried memory at {n} tokens (state vs KV cache)",
                "reported",
                f"{mem['state_bytes'][-1] / 1e3:,.1f} kB vs {mem['kv_cache_bytes'][-1] / 1e6:,.2f} MB",
                "",
            )
        )
    if con := results.get("concurrency"):
        lat = con["latency"] or {}
        growth = con["growth_mb"]
        out.append(
            (
                f"{con['sessions']} sessions, {con['reruns']} reruns: own correct result",
                "0 wrong",
                f"{con['wrong_results']} wrong, {len(con['errors'])} errors",
                _yes(con["wrong_results"] == 0 and not con["errors"]),
            )
        )
        out.append(
            (
                f"{con['sessions']} sessions: rerun latency",
                "reported",
                f"median {_ms(lat.get('median_ms', float('nan')))}, "
                f"p95 {_ms(lat.get('p95_ms', float('nan')))}",
                "",
            )
        )
        out.append(
            (
                f"Memory growth over {con['reruns']} reruns",
                f"< {con['target_growth_mb']:.0f} MB",
                "n/a" if growth is None else f"{growth:.1f} MB",
                _yes(None if growth is None else growth < con["target_growth_mb"]),
            )
        )
    return out


def render(results: dict) -> str:
    """Markdown: the machine line, then a table of target, measured and met."""
    m = results.get("machine", {})
    head = (
        f"Measured {m.get('date', '?')} on {m.get('cpu', '?')} ({m.get('cores', '?')} cores), "
        f"onnxruntime {m.get('onnxruntime', '?')} on **{m.get('provider_active', '?')}**, "
        f"torch {m.get('torch', '?')}. {m.get('note', '')}."
    )
    if results.get("quick"):
        head += " **Quick run (tiny sizes): not benchmark numbers.**"
    lines = [head, "", "| Benchmark | Target | Measured | Met |", "|---|---|---|---|"]
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows(results)]
    if gen := results.get("generation"):
        lines += ["", "Baselines: " + "; ".join(f"{k}: {v}" for k, v in gen["baselines"].items())]
    return "\n".join(lines) + "\n"


def write_summary(results_json: Path, out: Path | None = None) -> Path:
    """Read ``results.json`` and write ``summary.md`` beside it (or to ``out``)."""
    results = json.loads(Path(results_json).read_text())
    out = out or Path(results_json).with_name("summary.md")
    out.write_text(render(results))
    return out
