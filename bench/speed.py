"""App latency, onnxruntime vs PyTorch eager, and fast-graph scaling with sequence length."""

from __future__ import annotations

import time

import numpy as np

from bench.common import (
    fit_slope,
    peak_rss_bytes,
    reset_peak_rss,
    rss_bytes,
    sentence_of,
    summarize,
    time_ms,
)
from models import contract
from models.analysis import analyze, head_table

LATENCY_TARGET_MS = 150.0
SPEEDUP_TARGET = 1.5
LINEAR_SLOPE_TARGET = 1.15
SCALING_RATIO_TARGET = 5.0


def adaptive_times(fn, min_repeats: int = 3, max_repeats: int = 20, budget_s: float = 2.0):
    """Times (ms) of ``fn``: one warm-up, then at least ``min_repeats`` calls and more
    until ``budget_s`` seconds are spent or ``max_repeats`` is reached."""
    fn()
    times, spent = [], 0.0
    while len(times) < max_repeats and (len(times) < min_repeats or spent < budget_s):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
        spent += times[-1] / 1e3
    return times


def app_latency(models: dict, lengths: list[int], repeats: int) -> dict:
    """Sentence in -> every view's arrays out (``analyze`` + ``head_table``), per model and T.

    Each timed call gets a sentence it has not seen (no cache involved).

    Returns:
        ``{kind: {T: {"median_ms", "p95_ms", ...}}}`` plus ``target_ms`` and ``met``.
    """
    out: dict = {"target_ms": LATENCY_TARGET_MS, "what": "analyze() + head_table(), server side"}
    met = True
    for kind, model in models.items():
        rows = {}
        for T in lengths:
            texts = [sentence_of(model, T, seed=s) for s in range(repeats + 1)]
            it = iter(texts)

            def one(it=it, model=model):
                head_table(analyze(model, next(it)))

            stats = summarize(time_ms(one, repeats, warmup=1))
            rows[str(T)] = stats
            met &= stats["median_ms"] <= LATENCY_TARGET_MS
        out[kind] = rows
    out["met"] = bool(met)
    return out


def inference(twins: dict, T: int, repeats: int) -> dict:
    """onnxruntime vs PyTorch eager on the same weights and input (1, T), side by side.

    Calls alternate between the two engines so background load hits both alike.
    """
    import torch  # only here: the app's lesson page imports this module without torch

    out: dict = {"T": T, "target_speedup": SPEEDUP_TARGET}
    met = True
    for kind, twin in twins.items():
        ids = (np.arange(T, dtype=np.int64)[None, :] * 7) % twin.net.cfg.vocab_size  # (1, T)
        ids_t = torch.from_numpy(ids)

        def run_ort(twin=twin, ids=ids):
            return twin.fast.run(["logits"], {contract.INPUT_NAME: ids})[0]  # (1, T, V)

        def run_torch(twin=twin, ids_t=ids_t):
            with torch.inference_mode():
                return twin.net(ids_t)  # (1, T, V)

        diff = float(np.abs(run_ort() - run_torch().numpy()).max())
        ort_ms, torch_ms = [], []
        for _ in range(repeats):
            ort_ms += time_ms(run_ort, 1, warmup=0)
            torch_ms += time_ms(run_torch, 1, warmup=0)
        o, t = summarize(ort_ms), summarize(torch_ms)
        speedup = t["median_ms"] / o["median_ms"]
        met &= speedup >= SPEEDUP_TARGET
        out[kind] = {
            "onnxruntime": o,
            "torch_eager": t,
            "speedup": speedup,
            "max_abs_diff": diff,
            "weights": twin.source,
        }
    out["met"] = bool(met)
    return out


def scaling(models: dict, lengths: list[int], max_repeats: int, budget_s: float) -> dict:
    """Fast-graph time and peak extra memory against T, with log-log slopes.

    Returns:
        ``{kind: {"T": [...], "median_ms": [...], "peak_mb": [...], "slope": s,
        "memory_slope": s}}``, ``ratio_at`` (softmax / linear time at the largest
        common T <= 4,096) and ``met``.
    """
    out: dict = {"target_linear_slope": LINEAR_SLOPE_TARGET, "target_ratio": SCALING_RATIO_TARGET}
    for kind, model in models.items():
        session = model.fast_session or model.inspect_session
        rows: dict = {"T": [], "median_ms": [], "p95_ms": [], "peak_mb": []}
        for T in lengths:
            ids = (np.arange(T, dtype=np.int64)[None, :] * 7) % model.config.vocab_size  # (1, T)

            def run(session=session, ids=ids):
                session.run(["logits"], {contract.INPUT_NAME: ids})

            reset_peak_rss()
            base = rss_bytes()
            stats = summarize(adaptive_times(run, max_repeats=max_repeats, budget_s=budget_s))
            peak = peak_rss_bytes()
            rows["T"].append(T)
            rows["median_ms"].append(stats["median_ms"])
            rows["p95_ms"].append(stats["p95_ms"])
            rows["peak_mb"].append(None if base is None else max(peak - base, 0) / 1e6)
        rows["slope"] = fit_slope(rows["T"], rows["median_ms"]) if len(lengths) > 1 else None
        mem = [m for m in rows["peak_mb"] if m]
        ok = len(mem) == len(lengths) > 1
        rows["memory_slope"] = fit_slope(rows["T"], mem) if ok else None
        out[kind] = rows
    if "softmax" in out and "linear" in out:
        common = [T for T in lengths if T <= 4096]
        at = max(common) if common else lengths[0]
        i = lengths.index(at)
        ratio = out["softmax"]["median_ms"][i] / out["linear"]["median_ms"][i]
        out["ratio_T"], out["ratio"] = at, ratio
        slope = out["linear"]["slope"]
        out["met"] = bool(
            slope is not None and slope <= LINEAR_SLOPE_TARGET and ratio >= SCALING_RATIO_TARGET
        )
    return out
