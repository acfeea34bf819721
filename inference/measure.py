"""Timing, memory probes and fast-graph scaling against sequence length.

The measurements the live complexity lesson (``ui/complexity.py``) and ``python -m bench``
share, so both report the same quantities. Torch-free: onnxruntime sessions and
/proc readings only.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from inference.memory import release_freed
from models import contract

LINEAR_SLOPE_TARGET = 1.15
SCALING_RATIO_TARGET = 5.0
RATIO_T = 4096
GOOD_FIT_R2 = 0.98  # below this a log-log line does not describe the points (fit_warnings)
NOISY_SPREAD = 1.5  # p95 / median of a T's times above this: runs disturbed (fit_warnings)


def time_ms(fn: Callable[[], object], repeats: int, warmup: int = 1) -> list[float]:
    """Wall-clock times of ``repeats`` calls of ``fn`` in milliseconds, after ``warmup`` calls."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return times


def summarize(times_ms: list[float]) -> dict[str, float]:
    """Median, p95, min and count of a list of times in ms."""
    arr = np.asarray(times_ms, dtype=float)
    return {
        "median_ms": float(np.median(arr)),
        "p95_ms": float(np.percentile(arr, 95)),
        "min_ms": float(arr.min()),
        "n": int(arr.size),
    }


def fit_slope(x: list[float], y: list[float]) -> float:
    """Least-squares slope of log(y) against log(x): y ~ c x^slope."""
    lx, ly = np.log(np.asarray(x, float)), np.log(np.asarray(y, float))
    return float(np.polyfit(lx, ly, 1)[0])


def fit_r2(x: list[float], y: list[float]) -> float:
    """R² of the least-squares line through (log x, log y): 1 when the points lie on a
    power law y = c x^slope, lower the worse the line describes them."""
    lx, ly = np.log(np.asarray(x, float)), np.log(np.asarray(y, float))
    residual = ly - np.polyval(np.polyfit(lx, ly, 1), lx)
    total = float(((ly - ly.mean()) ** 2).sum())
    return 1.0 if total == 0 else float(1 - (residual**2).sum() / total)


def load_per_core() -> float | None:
    """The 1-minute load average divided by the CPU count (None where unknown): above 1,
    other work was waiting for the cores while this measured."""
    try:
        return os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:
        return None


def rss_bytes() -> int | None:
    """Current resident set size of this process (Linux /proc), or None."""
    return _proc_status_kb("VmRSS")


def reset_peak_rss() -> bool:
    """Reset the kernel's peak-RSS counter (VmHWM) of this process; False if unsupported."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def peak_rss_bytes() -> int | None:
    """Peak resident set size since start or the last :func:`reset_peak_rss`, or None."""
    return _proc_status_kb("VmHWM")


def _proc_status_kb(field: str) -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def first_call_peak_mb(fn) -> float | None:
    """Peak RSS growth (MB) during one call of ``fn``, or None where the kernel's
    peak counter cannot be reset (then the peak would be the process's, not the call's).

    Freed heap pages are given back to the system first (``malloc_trim``): otherwise the
    call reuses pages an earlier, larger run left in the heap, its RSS does not rise and
    the growth reads 0 (#20 item 3: no memory chart on a fresh server's first Measure).
    """
    release_freed()
    if not reset_peak_rss():
        fn()
        return None
    base = rss_bytes()
    fn()
    peak = peak_rss_bytes()
    return None if base is None or peak is None else max(peak - base, 0) / 1e6


def _interleaved(fns: dict, min_repeats: int, max_repeats: int, budget_s: float) -> dict:
    """Time the functions in rounds, one call each per round (order alternating),
    at least ``min_repeats`` rounds and more until ``budget_s`` or ``max_repeats``."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    spent, order = 0.0, list(fns)
    while len(times[order[0]]) < max(min_repeats, max_repeats if spent < budget_s else 0):
        for k in order:
            start = time.perf_counter()
            fns[k]()
            times[k].append((time.perf_counter() - start) * 1e3)
            spent += times[k][-1] / 1e3
        order.reverse()
    return times


def scaling(
    models: dict,
    lengths: list[int],
    max_repeats: int,
    budget_s: float,
    min_repeats: int = 3,
    ratio_repeats: int = 3,
) -> dict:
    """Fast-graph time and peak extra memory against T, with log-log slopes.

    At each T the models' calls alternate (background load hits both alike); the
    first call at each T (a warm-up) gives the peak RSS growth. The ratio T (4,096,
    else the largest T) gets at least ``ratio_repeats`` rounds.

    Returns:
        ``{kind: {"T": [...], "median_ms": [...], "p95_ms": [...], "n": [...],
        "peak_mb": [...], "slope": s, "fit_r2": r2, "top_slope": s (the longest
        doubling), "spread": max p95/median, "memory_slope": s}}``, ``load_per_core``
        (the larger of the load averages per core before and after), ``ratio_T``, ``ratio``
        (softmax / linear median time there), ``ratio_p10_p90`` (spread of the
        per-round ratios) and ``met``.
    """
    out: dict = {"target_linear_slope": LINEAR_SLOPE_TARGET, "target_ratio": SCALING_RATIO_TARGET}
    load = [load_per_core()]
    common = [T for T in lengths if T <= RATIO_T]
    ratio_T = max(common) if common else lengths[0]
    rows = {k: {"T": [], "median_ms": [], "p95_ms": [], "n": [], "peak_mb": []} for k in models}
    pairs: list[float] = []
    for T in lengths:
        fns = {}
        for kind, model in models.items():
            session = model.fast_session or model.inspect_session
            ids = (np.arange(T, dtype=np.int64)[None, :] * 7) % model.config.vocab_size  # (1, T)
            fns[kind] = lambda s=session, ids=ids: s.run(["logits"], {contract.INPUT_NAME: ids})
            rows[kind]["peak_mb"].append(first_call_peak_mb(fns[kind]))
        least = max(min_repeats, ratio_repeats) if T == ratio_T else min_repeats
        times = _interleaved(fns, least, max_repeats, budget_s)
        for kind in models:
            stats = summarize(times[kind])
            for key in ("median_ms", "p95_ms", "n"):
                rows[kind][key].append(stats[key])
            rows[kind]["T"].append(T)
        if T == ratio_T and {"softmax", "linear"} <= set(times):
            pairs = [s / lin for s, lin in zip(times["softmax"], times["linear"], strict=True)]
    for kind, row in rows.items():
        row["slope"] = fit_slope(row["T"], row["median_ms"]) if len(lengths) > 1 else None
        row["fit_r2"] = fit_r2(row["T"], row["median_ms"]) if len(lengths) > 2 else None
        row["top_slope"] = (
            fit_slope(row["T"][-2:], row["median_ms"][-2:]) if len(lengths) > 1 else None
        )
        row["spread"] = max(p / m for p, m in zip(row["p95_ms"], row["median_ms"], strict=True))
        mem = [m for m in row["peak_mb"] if m]
        ok = len(mem) == len(lengths) > 1
        row["memory_slope"] = fit_slope(row["T"], mem) if ok else None
        out[kind] = row
    load.append(load_per_core())
    out["load_per_core"] = None if None in load else max(load)
    out["peak_mb_what"] = (
        "peak RSS growth of the process during the first call at each T (onnxruntime's "
        "arena grows to fit; None where /proc/self/clear_refs cannot reset the peak)"
    )
    if pairs:
        i = lengths.index(ratio_T)
        out["ratio_T"] = ratio_T
        out["ratio"] = out["softmax"]["median_ms"][i] / out["linear"]["median_ms"][i]
        out["ratio_p10_p90"] = [float(np.percentile(pairs, q)) for q in (10, 90)]
        slope = out["linear"]["slope"]
        out["met"] = bool(
            slope is not None
            and slope <= LINEAR_SLOPE_TARGET
            and out["ratio"] >= SCALING_RATIO_TARGET
        )
    return out


def fit_warnings(sc: dict) -> list[str]:
    """Sentences on why a :func:`scaling` result should be read with care: a log-log fit
    that does not describe its points (R² below ``GOOD_FIT_R2``), times that scattered
    (p95 over ``NOISY_SPREAD`` × the median) or a busy machine (load above one per core).
    Empty when none applies."""
    out = []
    for kind in ("softmax", "linear"):
        row = sc.get(kind, {})
        if row.get("fit_r2") is not None and row["fit_r2"] < GOOD_FIT_R2:
            out.append(
                f"The {kind} fit is poor (R² {_below(row['fit_r2'])}): its points do not lie on "
                "one straight line, so one slope does not describe them; read the slope "
                "over the longest doubling instead."
            )
        if row.get("spread") is not None and row["spread"] > NOISY_SPREAD:
            out.append(
                f"The {kind} times scattered (p95 up to {row['spread']:.1f}× the median): "
                "other work interrupted the runs."
            )
    load = sc.get("load_per_core")
    if load is not None and load > 1:
        out.append(
            f"The server was busy while measuring (load {load:.1f} per core): other work "
            "waited for the same cores, so times are longer and noisier than on a quiet "
            "machine. Press Measure again when the class is idle."
        )
    return out


def _below(r2: float) -> str:
    """R² to two decimals, rounded down: a fit just under ``GOOD_FIT_R2`` (0.9776) reads
    0.97, not the 0.98 it was compared with."""
    return f"{np.floor(r2 * 100) / 100:.2f}"
