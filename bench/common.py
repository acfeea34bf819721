"""Shared helpers: timing, slope fitting, memory probes, machine info, models under test."""

from __future__ import annotations

import ctypes
import datetime as dt
import gc
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnxruntime as ort

from inference.runtime import OnnxModel, load_shipped
from models.tokenizer import encode, known_words

EXPORTED = Path(__file__).resolve().parents[1] / "exported"


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


def trim_memory() -> bool:
    """``gc.collect()``, then glibc's ``malloc_trim(0)`` (hands freed heap pages back to
    the kernel, so RSS shows live memory). Returns False where there is no glibc."""
    gc.collect()
    if not sys.platform.startswith("linux"):
        return False
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        return False
    return True


def _proc_status_kb(field: str) -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo (else ``platform.processor()``)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_info(model: OnnxModel | None = None) -> dict:
    """Where the numbers came from: CPU, cores, library versions, active provider, date."""
    import torch

    available = ort.get_available_providers()
    active = model.provider if model is not None else None
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "onnxruntime": ort.__version__,
        "providers_available": available,
        "provider_active": active,
        "gpu": active == "CUDAExecutionProvider",
        "note": (
            "CUDAExecutionProvider active"
            if active == "CUDAExecutionProvider"
            else "CPU only: CUDAExecutionProvider is not active on this machine"
        ),
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }


def shipped(kind: str, folder: Path = EXPORTED) -> OnnxModel:
    """A shipped model (``softmax`` or ``linear``) from ``folder``."""
    return load_shipped(folder, kind)


def torch_model(kind: str, model: OnnxModel, folder: Path = EXPORTED):
    """The PyTorch twin of a shipped model: ``(Transformer, source)``.

    Loads ``<folder>/<kind>.safetensors`` when present (same weights as the ONNX
    graphs); otherwise a randomly initialized ``Transformer`` of the shipped config
    (same shapes and cost, different numbers), and ``source`` says which.
    """
    import torch

    from models.checkpoint import load_checkpoint
    from models.transformer import Transformer

    path = folder / f"{kind}.safetensors"
    if path.exists():
        net, _tok, _meta = load_checkpoint(path)
        return net.eval(), f"checkpoint {path.name}"
    torch.manual_seed(0)
    return Transformer(model.config).eval(), "random weights, shipped config (no checkpoint)"


def sentence_of(model: OnnxModel, n_tokens: int, seed: int = 0) -> str:
    """A sentence of known whole words that tokenizes to exactly ``n_tokens`` tokens."""
    rng = np.random.default_rng(seed)
    words = [w for w in known_words(model.tokenizer) if w.isalpha()]
    single = [w for w in words if len(encode(model.tokenizer, w).ids) == 1] or words
    text = " ".join(rng.choice(single, size=n_tokens).tolist())
    got = len(encode(model.tokenizer, text).ids)
    if got != n_tokens:
        raise RuntimeError(f"could not build a {n_tokens}-token sentence (got {got})")
    return text


def median(values: list[float]) -> float:
    """Median of a list of numbers."""
    return float(statistics.median(values))
