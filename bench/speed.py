"""onnxruntime vs PyTorch eager, and fast-graph scaling with sequence length."""

from __future__ import annotations

import copy
import time

import numpy as np

from bench.common import fit_slope, peak_rss_bytes, reset_peak_rss, rss_bytes, summarize, time_ms
from models import contract

SPEEDUP_TARGET = 1.5
LINEAR_SLOPE_TARGET = 1.15
SCALING_RATIO_TARGET = 5.0
RATIO_T = 4096


def _on_cuda(session) -> bool:
    return session.get_providers()[0] == "CUDAExecutionProvider"


def _engines(twin, ids: np.ndarray):
    """``(run_ort, run_torch, label)`` for the fast graph and its PyTorch twin on ids (1, T).

    On CPU both return the logits (1, T, V) as arrays. With onnxruntime on CUDA the
    logits stay on the GPU (I/O binding) and PyTorch runs on CUDA too when it can
    (synchronized, logits left on the GPU); otherwise PyTorch runs on the CPU and the
    label says so. Each call uploads the (1, T) token ids, as the app would.
    """
    import torch  # only here: the app's lesson page imports this module without torch

    if not _on_cuda(twin.fast):

        def run_ort():
            return twin.fast.run(["logits"], {contract.INPUT_NAME: ids})[0]  # (1, T, V)

        def run_torch():
            with torch.inference_mode():
                return twin.net(torch.from_numpy(ids)).numpy()  # (1, T, V)

        return run_ort, run_torch, "onnxruntime CPU vs PyTorch CPU"
    binding = twin.fast.io_binding()

    def run_ort():
        binding.bind_cpu_input(contract.INPUT_NAME, ids)
        binding.bind_output("logits", "cuda", 0)
        twin.fast.run_with_iobinding(binding)  # waits for the GPU; logits stay there
        return binding

    device = "cuda" if torch.cuda.is_available() else "cpu"
    net = copy.deepcopy(twin.net).to(device)

    def run_torch():
        with torch.inference_mode():
            out = net(torch.from_numpy(ids).to(device))  # (1, T, V) on the device
        if device == "cuda":
            torch.cuda.synchronize()
        return out

    label = "onnxruntime CUDA vs PyTorch " + ("CUDA" if device == "cuda" else "CPU")
    return run_ort, run_torch, label


def inference(twins: dict, T: int, repeats: int) -> dict:
    """onnxruntime vs PyTorch eager on the same weights and input (1, T), side by side.

    Calls alternate between the two engines so background load hits both alike.

    Returns:
        ``{kind: {"onnxruntime", "torch_eager": {"median_ms", ...}, "speedup",
        "max_abs_diff", "weights", "comparison"}}``, ``T``, ``met``.
    """
    import torch

    out: dict = {"T": T, "target_speedup": SPEEDUP_TARGET}
    met = True
    for kind, twin in twins.items():
        ids = (np.arange(T, dtype=np.int64)[None, :] * 7) % twin.net.cfg.vocab_size  # (1, T)
        run_ort, run_torch, label = _engines(twin, ids)
        got = run_ort()
        got = got.copy_outputs_to_cpu()[0] if hasattr(got, "copy_outputs_to_cpu") else got
        ref = run_torch()
        ref = ref.cpu().numpy() if isinstance(ref, torch.Tensor) else ref
        diff = float(np.abs(got - ref).max())
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
            "comparison": label,
        }
    out["met"] = bool(met)
    return out


def _first_call_peak_mb(fn) -> float | None:
    """Peak RSS growth (MB) during one call of ``fn``, or None where the kernel's
    peak counter cannot be reset (then the peak would be the process's, not the call's)."""
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
        "peak_mb": [...], "slope": s, "memory_slope": s}}``, ``ratio_T``, ``ratio``
        (softmax / linear median time there), ``ratio_p10_p90`` (spread of the
        per-round ratios) and ``met``.
    """
    out: dict = {"target_linear_slope": LINEAR_SLOPE_TARGET, "target_ratio": SCALING_RATIO_TARGET}
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
            rows[kind]["peak_mb"].append(_first_call_peak_mb(fns[kind]))
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
        mem = [m for m in row["peak_mb"] if m]
        ok = len(mem) == len(lengths) > 1
        row["memory_slope"] = fit_slope(row["T"], mem) if ok else None
        out[kind] = row
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
