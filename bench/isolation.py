"""Upload isolation: what running uploads in worker processes costs, and what it spares.

Three measurements, one run, this process playing the server:

* ``start``: a fresh ``upload.client.Worker`` from ``start()`` to the reply of a request
  that needs no graph (the pure process start), to the reply of ``open`` of the shipped
  softmax inspect graph (checks, sessions, trial runs), and a worker forked by the
  zygote (``start("export")``), alternating, median of N each;
* ``analysis``: ``inference.analysis.analyze`` at T tokens on the shipped inspect graphs
  (plus the step graph for linear) uploaded as ONNX (an ``IsolatedModel``: each
  analysis is one request to its worker, two for linear) against the same bytes opened
  in this process with ``inference.runtime.load_graphs`` (onnxruntime's default threads),
  and against sessions with the worker's own options (1 thread, no arena); the three
  run in turn, round after round;
* ``hostile``: hostile uploads through ``upload.load.load_upload`` (``bench/hostile.py``),
  each of which must be refused with one line, while this process's peak RSS is read
  (VmHWM, reset through ``/proc/self/clear_refs`` before each case).
"""

from __future__ import annotations

import datetime as dt
import os
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort

from bench import hostile
from bench.common import BENCH_KINDS as SHIPPED_KINDS
from bench.common import cpu_model, sentence_of, trim_memory
from inference.analysis import analyze
from inference.measure import peak_rss_bytes, reset_peak_rss, rss_bytes, summarize
from inference.runtime import OnnxModel, load_graphs
from inference.sessions import ModelRunError
from models import contract
from upload.client import Worker
from upload.errors import UploadError
from upload.limits import ANALYSIS_TIMEOUT_S, CONVERT_TIMEOUT_S, MAX_ZIP_UNCOMPRESSED
from upload.load import load_upload

TARGET_ADDED_MS = 30.0
MB = 2**20


def _graphs(folder: Path, kind: str) -> dict[str, bytes]:
    """The upload of a shipped model as ONNX: its inspect graph, plus the step graph."""
    roles = ("inspect", "step") if kind == "linear" else ("inspect",)
    names = [contract.graph_file(kind, role) for role in roles]
    return {name: (folder / name).read_bytes() for name in names if (folder / name).exists()}


def _started(op: str | None, blobs: dict[str, bytes] | None) -> float:
    """Milliseconds from a fresh worker's ``start(op)`` to its reply: to ``open`` of
    ``blobs``, or with none to a request that needs no graph (its own refusal)."""
    worker = Worker("bench")
    try:
        begin = time.perf_counter()
        worker.start(op)
        try:
            worker.request({"op": "open" if blobs else "ping"}, CONVERT_TIMEOUT_S, blobs=blobs)
        except UploadError as exc:  # the ping's answer: the worker's own refusal
            if blobs is not None or "no graph is open" not in str(exc):
                raise
        return (time.perf_counter() - begin) * 1e3
    finally:
        worker.stop()


def worker_start(folder: Path, starts: int) -> dict:
    """``start()`` to a first reply: fresh workers (trivial, ``open``), and forked ones
    (``upload/zygote.py``) once the zygote runs (its first fork is reported alone)."""
    name = contract.graph_file("softmax", "inspect")
    graph = {name: (folder / name).read_bytes()}
    zygote_first_ms = _started("export", None)
    asks = {"process": (None, None), "process_and_open": (None, graph), "forked": ("export", None)}
    times: dict[str, list[float]] = {key: [] for key in asks}
    for _ in range(starts):
        for key, (op, blobs) in asks.items():
            times[key].append(_started(op, blobs))
    return {
        **{key: summarize(ms) for key, ms in times.items()},
        "zygote_first_ms": round(zygote_first_ms, 1),
        "graph": name,
        "graph_bytes": len(graph[name]),
    }


def one_thread_model(files: dict[str, bytes], like: OnnxModel) -> OnnxModel:
    """``like``'s graphs again in this process, with the worker's session options
    (``upload/handlers.py``: 1 intra-op and 1 inter-op thread, no memory arena, CPU)."""

    def session(data: bytes | None):
        if data is None:
            return None
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 4
        options.enable_cpu_mem_arena = False
        return ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])

    inspect, step = _split(files)
    return OnnxModel(like.name, like.config, like.tokenizer, session(inspect), None, session(step))


def _split(files: dict[str, bytes]) -> tuple[bytes, bytes | None]:
    inspect = next(v for k, v in files.items() if k.endswith(".inspect.onnx"))
    return inspect, next((v for k, v in files.items() if k.endswith(".step.onnx")), None)


def added_cost(folder: Path, T: int, repeats: int) -> dict:
    """Each shipped model: one analysis through its worker vs in this process."""
    out: dict = {"T": T, "target_added_ms": TARGET_ADDED_MS, "repeats": repeats}
    for kind in SHIPPED_KINDS:
        files = _graphs(folder, kind)
        inspect, step = _split(files)
        default = load_graphs(inspect, None, step, name=f"{kind} (in process)")
        variants = {
            "worker": load_upload(dict(files)),
            "in_process": default,
            "in_process_1_thread": one_thread_model(files, default),
        }
        try:
            out[kind] = _alternate(variants, sentence_of(default, T), repeats)
        finally:
            variants["worker"].close()
        out[kind]["in_process_provider"] = default.provider
        out[kind]["files"] = sorted(files)
    return out


def _alternate(variants: dict, sentence: str, repeats: int) -> dict:
    """``analyze`` on every variant in turn (the order rotates each round), ``repeats``
    rounds after one warm-up round.

    A worker that fails an analysis (ModelRunError) is counted in ``worker_failures``
    with its line, and that round is dropped on every side; the failed worker's
    replacement is started and opened by one untimed call before the next round.
    """
    keys = list(variants)
    times: dict[str, list[float]] = {k: [] for k in keys}
    failures: list[str] = []
    first = {k: analyze(m, sentence) for k, m in variants.items()}  # warm-up, and results
    worker_calls, cold = 1, False
    while len(times["worker"]) < repeats:
        if len(failures) > repeats:
            raise RuntimeError(f"the worker failed {len(failures)} analyses: {failures[-1]}")
        try:
            if cold:  # a fresh worker: its first call opens the graphs again (untimed)
                worker_calls += 1
                analyze(variants["worker"], sentence)
                cold = False
            i = len(times["worker"]) + len(failures)
            one: dict[str, float] = {}
            for key in keys[i % len(keys) :] + keys[: i % len(keys)]:
                worker_calls += key == "worker"
                begin = time.perf_counter()
                analyze(variants[key], sentence)
                one[key] = (time.perf_counter() - begin) * 1e3
        except ModelRunError as exc:  # only the worker's model raises it here
            failures.append(str(exc))
            cold = True
            continue
        for key, value in one.items():
            times[key].append(value)
    worker, here = first["worker"], first["in_process"]
    stats = {k: summarize(v) for k, v in times.items()}
    paired = np.asarray(times["worker"]) - np.asarray(times["in_process"])
    paired_1 = np.asarray(times["worker"]) - np.asarray(times["in_process_1_thread"])
    return stats | {
        "added_ms": stats["worker"]["median_ms"] - stats["in_process"]["median_ms"],
        "added_ms_vs_1_thread": (
            stats["worker"]["median_ms"] - stats["in_process_1_thread"]["median_ms"]
        ),
        "paired_added_ms": {
            "median_ms": float(np.median(paired)),
            "p95_ms": float(np.percentile(paired, 95)),
        },
        "paired_added_ms_vs_1_thread": float(np.median(paired_1)),
        "worker_failures": failures,
        "worker_calls": worker_calls,
        "max_abs_diff": float(
            max(np.abs(worker.outputs[k] - here.outputs[k]).max() for k in here.outputs)
        ),
    }


def hostile_cases(folder: Path) -> list[dict]:
    """Hostile uploads: ``name``, ``files`` and ``length`` (the sentence length whose
    analysis trips the case; None: refused at upload)."""
    name = contract.graph_file("softmax", "inspect")
    shipped = (folder / name).read_bytes()
    graph = onnx.load_from_string(shipped)
    nano = hostile.nanogpt_files()
    big = hostile.rewire_output(graph, "logits", hostile.allocate_at_length(5))
    slow = hostile.rewire_output(graph, "logits", hostile.slow_at_length(6))
    bomb = hostile.zip_bytes({"archive/data.pkl": 16, "archive/data/0": MAX_ZIP_UNCOMPRESSED + 1})
    return [
        {
            "name": "meta.pkl: a tuple nested 1,000,000 deep as a dict key, beside a valid ckpt.pt",
            "files": {"ckpt.pt": nano["ckpt.pt"], "meta.pkl": hostile.nested_key_pickle()},
            "length": None,
        },
        {
            "name": "ONNX graph that asks for 4 GiB at T = 5 only",
            "files": {"big.inspect.onnx": big.SerializeToString()},
            "length": 5,
        },
        {
            "name": "ONNX graph that runs for minutes at T = 6 only",
            "files": {"slow.inspect.onnx": slow.SerializeToString()},
            "length": 6,
        },
        {
            "name": f"zip bomb ckpt.pt ({MAX_ZIP_UNCOMPRESSED + 1:,} bytes of zeros), valid meta.pkl",
            "files": {"ckpt.pt": bomb, "meta.pkl": nano["meta.pkl"]},
            "length": None,
        },
        {
            "name": f"truncated {name} (its first half)",
            "files": {name: hostile.truncated(shipped)},
            "length": None,
        },
    ]


def hostile_suite(folder: Path) -> dict:
    """Every hostile case through ``load_upload`` (and one analysis at its length), this
    process's peak RSS growth over the whole suite and per case."""
    cases = hostile_cases(folder)  # built first: making them is not the server's doing
    trim_memory()
    base = rss_bytes()
    resettable = reset_peak_rss()
    results, peaks = [], []
    for case in cases:
        case_base = rss_bytes()
        reset_peak_rss()
        begin, model, stage = time.perf_counter(), None, "upload"
        try:
            model = load_upload(case["files"])
            if case["length"] is not None:
                stage = f"analysis at T = {case['length']}"
                model.inspect(list(range(3, 3 + case["length"])))
            error = None
        except (UploadError, ModelRunError) as exc:
            error = str(exc)
        finally:
            if model is not None:
                model.close()
        seconds = time.perf_counter() - begin
        peaks.append(peak_rss_bytes())
        results.append(
            {
                "name": case["name"],
                "files": {k: len(v) for k, v in case["files"].items()},
                "refused": error is not None,
                "stage": stage,
                "error": error,
                "one_line": error is not None and "\n" not in error and len(error) <= 700,
                "seconds": seconds,
                "peak_rss_growth_mb": _growth(peaks[-1], case_base, resettable),
            }
        )
    return {
        "cases": results,
        "all_refused_one_line": all(c["refused"] and c["one_line"] for c in results),
        "peak_rss_growth_mb": _growth(max(peaks, default=None), base, resettable),
        "rss_before_mb": base / MB if base else None,
        "rss_reading": (
            "VmHWM of this process (reset through /proc/self/clear_refs before each case) "
            "minus its VmRSS before the suite, after gc.collect() and malloc_trim(0)"
            if resettable
            else "unavailable: /proc/self/clear_refs could not reset VmHWM here"
        ),
        "analysis_timeout_s": ANALYSIS_TIMEOUT_S,
    }


def _growth(peak: int | None, base: int | None, resettable: bool) -> float | None:
    return (peak - base) / MB if resettable and peak and base else None


def isolation(folder: Path, T: int, repeats: int, starts: int) -> dict:
    """The whole section: worker start, added cost per analysis, the hostile suite."""
    loadavg_start = list(os.getloadavg())
    return {
        "start": worker_start(folder, starts),
        "analysis": added_cost(folder, T, repeats),
        "hostile": hostile_suite(folder),
        "worker_threads": 1,
        "in_process_threads": "onnxruntime default (one per physical core)",
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "loadavg_start": loadavg_start,
        "loadavg_end": list(os.getloadavg()),
    }
