"""Rows and notes of the ``inference`` (onnxruntime vs PyTorch) and ``scaling`` sections."""

from __future__ import annotations

from bench.sections.format import ms, yes
from models.config import SHIPPED_KINDS


def inference(inf: dict, results: dict) -> list[tuple]:
    """onnxruntime vs PyTorch eager, labelled with the devices compared."""
    out = []
    provider = results.get("machine", {}).get("provider_active")
    default = "onnxruntime CPU vs PyTorch CPU" if provider != "CUDAExecutionProvider" else "?"
    for kind in SHIPPED_KINDS:
        if s := inf.get(kind):
            label = s.get("comparison", default)
            # DeltaNet's graphs scan the tokens one by one (ONNX has no triangular solve for
            # the chunked form PyTorch runs): reported, the target is the other two's
            scanned = kind == "delta"
            out.append(
                (
                    f"{label} (eager), {kind}, T = {inf['T']}",
                    "reported" if scanned else f">= {inf['target_speedup']}x faster",
                    f"{s['speedup']:.2f}x ({ms(s['onnxruntime']['median_ms'])} vs "
                    f"{ms(s['torch_eager']['median_ms'])}, medians)",
                    "" if scanned else yes(s["speedup"] >= inf["target_speedup"]),
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
    if (dl := sc.get("delta")) and dl["slope"] is not None:  # DeltaNet: linear time too
        ok = dl["slope"] <= sc["target_linear_slope"]
        name = f"Delta (DeltaNet) fast graph, log-log slope, T = {dl['T'][0]}..{dl['T'][-1]}"
        out.append((name, f"<= {sc['target_linear_slope']}", f"{dl['slope']:.2f}", yes(ok)))
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
    return out + chunked(sc)


def chunked(sc: dict) -> list[tuple]:
    """The linear fast graph before and after chunking (``bench/chunked.py``)."""
    c = sc.get("chunked")
    if not c:
        return []
    b, a, t = c["before"], c["after"], c["targets"]
    name = f"Linear fast graph in chunks vs every prefix state, T = {c['length']}"
    rel = c["max_abs_diff"] / max(c["max_abs_logit"], 1e-30)
    return [
        (
            f"{name}: peak extra memory",
            f"<= {t['memory'] * 100:.0f} % of before",
            f"{c['memory_ratio'] * 100:.0f} % ({a['peak_mb_median']:.1f} vs "
            f"{b['peak_mb_median']:.1f} MB, medians of {len(a['peak_mb'])} fresh processes, "
            "freed blocks returned at once)",
            yes(c["memory_ratio"] <= t["memory"]),
        ),
        (
            f"{name}: peak RSS growth, glibc malloc defaults",
            "reported",
            f"{c['default_malloc_memory_ratio'] * 100:.0f} % "
            f"({a['default_malloc_peak_mb_median']:.1f} vs "
            f"{b['default_malloc_peak_mb_median']:.1f} MB)",
            "",
        ),
        (
            f"{name}: time",
            f"<= {t['time']}x before",
            f"{c['time_ratio']:.2f}x ({ms(a['median_ms'])} vs {ms(b['median_ms'])}, "
            f"medians of {a['n']} alternating calls)",
            yes(c["time_ratio"] <= t["time"]),
        ),
        (
            f"{name}: logits",
            f"largest difference <= {t['output']:g} x the largest logit",
            f"{c['max_abs_diff']:.1e} ({rel:.1e} x the largest, {c['max_abs_logit']:.1f})",
            yes(rel <= t["output"]),
        ),
    ]


def scaling_notes(sc: dict) -> list[str]:
    """How the ratio was measured, and what the chunked rows compare."""
    out = []
    if c := sc.get("chunked"):
        out.append(
            "Linear fast graph in chunks (`models/causal_product.py`, 64 tokens, one carried "
            "state per chunk) against the graph that built every prefix state "
            f"(before: {c['before_graph']}), same weights and ids. Peak extra memory = "
            "peak RSS growth of one call in a fresh process per graph after a call at T = 1 "
            "(`bench/chunked.py`), with glibc's mmap threshold fixed at 128 KiB so freed "
            "tensors go back to the system at once (the tensors alive together: the target); "
            "with glibc's defaults a server keeps freed tensors of a few MB in its heap, "
            "so its RSS grows more (the reported row). The logits, (1, T, V), are "
            f"{c['length'] * c['vocab_size'] * 4 / 1e6:.0f} MB of the after figure."
        )
    if "ratio_p10_p90" not in sc:
        return out
    lo, hi = sc["ratio_p10_p90"]
    target = sc["target_ratio"]
    if lo >= target:
        verdict = "even the p10 of the per-round ratios meets the target"
    elif hi < target:
        verdict = "even the p90 of the per-round ratios misses the target"
    else:
        verdict = "the target lies inside the p10–p90 spread of the per-round ratios (noise)"
    return out + [
        "Scaling: softmax and linear calls alternate at every T (one round = one call "
        f"each); at T = {sc['ratio_T']}, {verdict}."
    ]
