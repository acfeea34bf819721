"""Many classroom sessions on one server: Streamlit AppTest sessions in threads.

Every session is its own ``AppTest`` of ``app.py`` (its own session state),
while ``st.cache_resource`` / ``st.cache_data`` are shared by all of them as on
one ``streamlit run`` server. Each session types its own sentences; after every
rerun the attention heatmap it shows is checked against a direct
``inference.analysis.analyze`` of that session's sentence (computed before the
sessions start), so a result leaking from one session into another is caught.

``python -m bench`` runs this section in a child process
(``python -m bench.concurrency``) with ``MALLOC_ARENA_MAX=2``, as ``make run``
serves the app: glibc reads it at process start, and a fresh process keeps the
earlier sections' memory out of the RSS readings.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

from bench.apptest import serving, shared_runtime, shown_attention
from bench.common import EXPORTED, sentence_of, shipped, trim_memory
from inference.analysis import analyze
from inference.measure import rss_bytes, summarize

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
GROWTH_TARGET_MB = 50.0
ARENA_MAX = "2"  # MALLOC_ARENA_MAX of the child process, as `make run` sets it
# AppTest sessions driven from plain threads trip this harmless "bare mode" warning.
logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").setLevel(logging.ERROR)


def concurrency(
    models: dict,
    sessions: int,
    reruns: int,
    per_session_sentences: int = 5,
    timeout: int = 300,
    folder: Path = EXPORTED,
    single_reruns: int = 20,
) -> dict:
    """Run ``sessions`` AppTest sessions at once for ``reruns`` reruns in total.

    Args:
        models: kind -> ``OnnxModel`` loaded from ``folder`` (the direct reference analysis).
        sessions: simultaneous sessions (alternating softmax and linear models).
        reruns: total reruns across sessions (each session does reruns // sessions).
        per_session_sentences: distinct sentences a session cycles through.
        timeout: seconds one rerun may take.
        folder: the shipped graphs the app serves.
        single_reruns: reruns of one session alone, before the concurrent run.

    Returns:
        Latency (ms) of one session alone and of all at once, throughput (reruns/s),
        RSS (MB) after a concurrent warm-up round and at the end, growth (whole run
        and second half), wrong-result count and whether the targets were met.
    """
    kinds = list(models)
    apps, texts, expected = [], [], {}
    for i in range(sessions):
        kind = kinds[i % len(kinds)]
        at = AppTest.from_file(str(APP), default_timeout=timeout)
        at.query_params["model"] = kind
        at.query_params["view"] = "attention"
        apps.append((kind, at))
        mine = [
            sentence_of(models[kind], 4 + (i + j) % 17, seed=1000 * i + j)
            for j in range(per_session_sentences)
        ]
        texts.append(mine)
        for text in mine:  # the reference, computed before any session starts
            expected[kind, text] = analyze(models[kind], text).outputs["attn"][0, 0]  # (T, T)
    with serving(folder), shared_runtime():
        out = _drive(apps, texts, expected, reruns, single_reruns)
    out["malloc_arena_max"] = os.environ.get("MALLOC_ARENA_MAX")
    return out


def _half_growth(trace: list) -> float | None:
    """RSS at the end minus RSS halfway through the reruns (MB): a leak keeps growing,
    allocator warm-up flattens out."""
    values = [v for v in trace if v is not None]
    return values[-1] - values[len(values) // 2] if len(values) > 1 else None


def _rerun(at: AppTest, text: str, want: np.ndarray) -> tuple[float, bool]:
    """Type ``text`` into one session; (milliseconds, whether it shows ``want``)."""
    start = time.perf_counter()
    at.text_area(key="text").set_value(text).run()
    ms = (time.perf_counter() - start) * 1e3
    try:
        shown = shown_attention(at)
        ok = shown.shape == want.shape and np.allclose(shown, want, atol=1e-5)
    except (IndexError, KeyError, ValueError):
        ok = False
    return ms, ok and not at.exception


def _all_at_once(apps, texts, expected, per: int, offset: int) -> dict:
    """Every session reruns ``per`` times, all starting together (threads, one barrier)."""
    barrier = threading.Barrier(len(apps))
    latencies, wrong, errors, trace = [], [], [], []
    lock = threading.Lock()

    def worker(i: int) -> None:
        kind, at = apps[i]
        barrier.wait()
        for j in range(per):
            text = texts[i][(j + offset) % len(texts[i])]
            try:
                ms, ok = _rerun(at, text, expected[kind, text])
            except Exception as exc:  # a crashed session is a result, not a crash here
                with lock:
                    errors.append(f"session {i}: {exc!r}")
                return
            rss = rss_bytes()
            with lock:
                latencies.append(ms)
                trace.append(None if rss is None else rss / 1e6)
                if not ok:
                    wrong.append(f"session {i} rerun {j}")

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(apps))]
    wall = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - wall
    return {"latencies": latencies, "wrong": wrong, "errors": errors, "trace": trace, "wall": wall}


def _drive(apps: list, texts: list, expected: dict, reruns: int, single_reruns: int) -> dict:
    """Warm up, time one session alone, then all at once; see :func:`concurrency`."""
    for (_, at), mine in zip(apps, texts, strict=True):  # first page load, each sentence once
        at.run()
        for text in mine:
            at.text_area(key="text").set_value(text).run()
    kind, at = apps[0]
    alone = []
    wall = time.perf_counter()
    for j in range(single_reruns):
        text = texts[0][(j + 1) % len(texts[0])]
        alone.append(_rerun(at, text, expected[kind, text])[0])
    alone_wall = time.perf_counter() - wall
    _all_at_once(apps, texts, expected, 1, 0)  # warm-up round: threads and arenas
    trimmed = trim_memory()
    rss_start = rss_bytes()
    run = _all_at_once(apps, texts, expected, max(1, reruns // len(apps)), 1)
    trim_memory()
    rss_end = rss_bytes()
    growth = None if rss_start is None else (rss_end - rss_start) / 1e6
    latencies, wrong, errors, trace = run["latencies"], run["wrong"], run["errors"], run["trace"]
    cores = os.cpu_count()
    return {
        "sessions": len(apps),
        "reruns": len(latencies),
        "wall_s": run["wall"],
        "latency": summarize(latencies) if latencies else None,
        "throughput_per_s": len(latencies) / run["wall"] if run["wall"] else None,
        "single_session": {
            "model": kind,
            "latency": summarize(alone) if alone else None,
            "throughput_per_s": len(alone) / alone_wall if alone else None,
        },
        "latency_note": f"{len(apps)} sessions on {cores} cores: "
        + (
            "each rerun mostly waits for the others' CPU time, so the concurrent latency is "
            "queueing (about sessions / throughput)"
            if cores and len(apps) > cores
            else "no more sessions than cores"
        )
        + "; the single-session latency is what one rerun costs",
        "wrong_results": len(wrong),
        "wrong_examples": wrong[:5],
        "errors": errors[:5],
        "rss_after_warmup_mb": None if rss_start is None else rss_start / 1e6,
        "rss_end_mb": None if rss_end is None else rss_end / 1e6,
        "growth_mb": growth,
        "rss_trace_mb": trace[:: max(1, len(trace) // 50)],
        "growth_second_half_mb": _half_growth(trace),
        "rss_readings": "after gc.collect()"
        + (" and malloc_trim(0)" if trimmed else "")
        + ", following one concurrent warm-up round",
        "target_growth_mb": GROWTH_TARGET_MB,
        "met": bool(growth is not None and growth < GROWTH_TARGET_MB and not wrong and not errors),
    }


def run_isolated(folder: Path, sessions: int, reruns: int, timeout_s: int = 3600) -> dict:
    """:func:`concurrency` in a child process with ``MALLOC_ARENA_MAX=2``; its result,
    or ``{"error": ...}`` when the child fails."""
    env = os.environ | {"MALLOC_ARENA_MAX": ARENA_MAX}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "concurrency.json"
        cmd = [sys.executable, "-m", "bench.concurrency", "--models", str(folder)]
        cmd += ["--sessions", str(sessions), "--reruns", str(reruns), "--out", str(path)]
        proc = subprocess.run(
            cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout_s
        )
        if proc.returncode != 0 or not path.exists():
            tail = (proc.stderr or proc.stdout)[-2000:]
            return {"error": f"exit {proc.returncode}: {tail}", "sessions": sessions, "met": False}
        out = json.loads(path.read_text())
    out["process"] = f"child process, MALLOC_ARENA_MAX={ARENA_MAX}"
    return out


def main(argv: list[str] | None = None) -> None:
    """``python -m bench.concurrency --models DIR --sessions N --reruns N --out FILE``."""
    parser = argparse.ArgumentParser(prog="python -m bench.concurrency")
    parser.add_argument("--models", type=Path, default=EXPORTED)
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--reruns", type=int, default=500)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    logging.getLogger("streamlit").setLevel(logging.ERROR)
    models = {kind: shipped(kind, args.models) for kind in ("softmax", "linear")}
    single = min(20, args.reruns)
    out = concurrency(models, args.sessions, args.reruns, folder=args.models, single_reruns=single)
    args.out.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
