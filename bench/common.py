"""Shared helpers: memory trimming, machine info, models under test. Timing and memory
probes are in ``inference/measure.py`` (the live complexity lesson uses them too)."""

from __future__ import annotations

import ctypes
import datetime as dt
import gc
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort

from inference.runtime import OnnxModel, load_shipped
from models.tokenizer import encode, known_words

EXPORTED = Path(__file__).resolve().parents[1] / "exported"
# The shipped kinds most sections measure: their rows compare softmax with linear attention.
# The third shipped model (delta, #22) is measured where its graphs are what the row is
# about, onnxruntime against PyTorch and time against length (``EVERY_KIND``); the upload
# isolation rows cannot run it (its graphs use Scan and Conv, which the upload checks refuse).
BENCH_KINDS = ("softmax", "linear")
EVERY_KIND = ("softmax", "linear", "delta")


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


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo (else ``platform.processor()``)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


# A bench student waits this long after each answer: about three clicks a second, under
# the server's limit of 4 reruns a second a session (ui/rerun_gate.py RATE_PER_S; the
# bench does not import ui). At 0.1 s the student itself went past the limit, and its
# slowest reruns were waits for the limit, not for the server.
THINK_S = 0.3
CHART = "attnviz_chart"  # the app's plotly charts: ui.chart's component (a test checks it)
SPEED_LOOP = 1_000_000  # additions in the speed probe's loop (~0.1 s)


def speed_probe_ms() -> float:
    """The median of three timings (ms) of one pure-Python loop of ``SPEED_LOOP``
    additions: how fast this machine runs the interpreter now. On the project's 2-core
    VM a loop three times as long took 250-290 ms in one quarter of an hour and 400-540
    ms in the next (a shared host), and every wall-clock row moved with it; the bench
    records the probe at the start and the end of a run so that two runs can be read
    side by side."""
    times = []
    for _ in range(3):
        start, total = time.perf_counter(), 0
        for i in range(SPEED_LOOP):
            total += i
        times.append((time.perf_counter() - start) * 1e3)
    return sorted(times)[1]


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
    """A shipped model (``softmax``, ``linear`` or ``delta``) from ``folder``."""
    return load_shipped(folder, kind)


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
