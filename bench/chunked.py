"""The linear fast graph before and after chunking (issue #22 item 5), rows of ``scaling``.

Before: the fast form that built every prefix state S_i (B, H, T, d_head, d_head) by a
cumulative sum, then read each out; after: the chunked causal product
(``models/causal_product.py``), one carried state per chunk of 64 tokens. Both run the
same weights on the same ids at T = 4,096:

* peak extra memory: each graph in a fresh process (``python -m bench.chunked PATH T V``):
  the session opened (arena off, as the app opens it) and run once at T = 1, freed heap
  given back, the kernel's peak counter reset, one call at T, then peak RSS (VmHWM)
  minus RSS before the call; the median of ``starts`` processes. Twice: with glibc's
  mmap threshold fixed at 128 KiB (``MALLOC_MMAP_THRESHOLD_``), so every freed tensor
  goes back to the system and the peak is the tensors alive at once, the graph's own
  memory (the target's figure); and with glibc's defaults, as a server process runs,
  where the threshold rises to the largest block freed (up to 32 MiB) and freed
  tensors of a few MB stay in the heap (reported);
* time: one session each in this process, calls alternating (one warm-up each), median
  and p95 of ``rounds`` calls;
* outputs: max |after - before| of the logits against max |before|.

The before graph is ``before`` (e.g. ``git show main:exported/linear.fast.onnx``), or
the prefix-state form exported now from the checkpoint beside the graphs
(``LinearAttention.chunk = None``; same computation as the graph shipped before #22).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np

from inference.measure import first_call_peak_mb, summarize, time_ms
from inference.sessions import make_session
from models import contract

MEMORY_TARGET = 0.25  # after's peak extra memory <= 25 % of before's
TIME_TARGET = 1.2  # after's median time <= 1.2 x before's
OUTPUT_TOLERANCE = 1e-5  # max |after - before| <= 1e-5 x max |before| (relative)


def prefix_state_graph(model, folder: Path, path: Path) -> Path:
    """Export the linear model of ``folder`` (its checkpoint, or random weights of the
    shipped config) with the prefix-state fast form to ``path``, as before #22 (dynamo)."""
    import torch

    from export.graphs import FastGraph
    from export.torch_export import export_module
    from export.twins import torch_model

    net, _source = torch_model("linear", model, folder)
    for block in net.blocks:
        block.attn.mixing.chunk = None  # every prefix state, then the readout
    T = torch.export.Dim("T", min=1, max=1 << 16)
    example = torch.randint(0, model.config.vocab_size, (1, 8))  # (1, T)
    names = [contract.INPUT_NAME]
    export_module(FastGraph(net), (example,), path, names, ["logits"], {names[0]: {1: T}})
    return path


LIVE_MALLOC = {"MALLOC_MMAP_THRESHOLD_": str(128 * 1024)}  # freed blocks go back at once


def fresh_peak_mb(path: Path, T: int, vocab_size: int, env: dict | None = None) -> float:
    """Peak RSS growth (MB) of one call of the graph at ``path`` on (1, T) ids, in a
    fresh Python process (``python -m bench.chunked``) with ``env`` added to its
    environment."""
    root = Path(__file__).resolve().parents[1]
    cmd = [sys.executable, "-m", "bench.chunked", str(path), str(T), str(vocab_size)]
    done = subprocess.run(
        cmd, cwd=root, capture_output=True, text=True, check=True, env=os.environ | (env or {})
    )
    return json.loads(done.stdout.strip().splitlines()[-1])["peak_mb"]


def _ids(T: int, vocab_size: int) -> np.ndarray:
    return (np.arange(T, dtype=np.int64)[None, :] * 7) % vocab_size  # (1, T)


def compare(model, folder: Path, tmp: Path, T: int, rounds: int, starts: int, before=None) -> dict:
    """Before vs after at ``T`` (see the module docstring); ``model``: the shipped linear
    :class:`~inference.runtime.OnnxModel` of ``folder``; ``before``: a graph path, or None
    to export the prefix-state form into ``tmp``.

    Returns:
        ``{"length" (T), "before_graph", "vocab_size", "before"/"after": {"peak_mb": [...], "peak_mb_median",
        "default_malloc_peak_mb": [...], "default_malloc_peak_mb_median", "median_ms",
        "p95_ms", "min_ms", "n"}, "memory_ratio", "default_malloc_memory_ratio", "time_ratio",
        "max_abs_diff", "max_abs_logit", "targets": {...}, "met"}``.
    """
    after = folder / contract.graph_file("linear", "fast")
    label = str(before)
    if before is None:
        tmp.mkdir(parents=True, exist_ok=True)
        before = prefix_state_graph(model, folder, tmp / "prefix_states.onnx")
        label = "the prefix-state form, exported at bench time"
    paths = {"before": Path(before), "after": after}
    V = model.config.vocab_size
    # "length", not "T": viz/complexity.py draws every dict of ``scaling`` with a "T"
    out: dict = {"length": T, "before_graph": label, "vocab_size": V}
    ids = {contract.INPUT_NAME: _ids(T, V)}
    for name, path in paths.items():
        live = [fresh_peak_mb(path, T, V, LIVE_MALLOC) for _ in range(starts)]
        default = [fresh_peak_mb(path, T, V) for _ in range(starts)]
        out[name] = {"peak_mb": live, "peak_mb_median": statistics.median(live)}
        out[name] |= {"default_malloc_peak_mb": default}
        out[name]["default_malloc_peak_mb_median"] = statistics.median(default)
    sessions = {name: make_session(path) for name, path in paths.items()}
    logits = {name: s.run(["logits"], ids)[0] for name, s in sessions.items()}  # warm-up
    times: dict[str, list[float]] = {name: [] for name in sessions}
    order = list(sessions)
    for _ in range(rounds):
        for name in order:
            times[name] += time_ms(lambda s=sessions[name]: s.run(["logits"], ids), 1, warmup=0)
        order.reverse()
    for name in sessions:
        out[name].update(summarize(times[name]))
    b, a = out["before"], out["after"]
    out["memory_ratio"] = a["peak_mb_median"] / max(b["peak_mb_median"], 1e-9)
    out["default_malloc_memory_ratio"] = a["default_malloc_peak_mb_median"] / max(
        b["default_malloc_peak_mb_median"], 1e-9
    )
    out["time_ratio"] = a["median_ms"] / b["median_ms"]
    out["max_abs_diff"] = float(np.abs(logits["after"] - logits["before"]).max())
    out["max_abs_logit"] = float(np.abs(logits["before"]).max())
    out["targets"] = {"memory": MEMORY_TARGET, "time": TIME_TARGET, "output": OUTPUT_TOLERANCE}
    out["met"] = bool(
        out["memory_ratio"] <= MEMORY_TARGET
        and out["time_ratio"] <= TIME_TARGET
        and out["max_abs_diff"] <= OUTPUT_TOLERANCE * out["max_abs_logit"]
    )
    return out


def _child(path: str, T: int, vocab_size: int) -> None:
    """In the fresh process: open the graph, run it at T = 1, then the peak growth of a
    call at T."""
    session = make_session(path)
    session.run(["logits"], {contract.INPUT_NAME: _ids(1, vocab_size)})  # one-time set-up
    ids = {contract.INPUT_NAME: _ids(T, vocab_size)}
    print(json.dumps({"peak_mb": first_call_peak_mb(lambda: session.run(["logits"], ids))}))


if __name__ == "__main__":
    _child(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
