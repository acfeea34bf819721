"""Many classroom sessions on one server: Streamlit AppTest sessions in threads.

Every session is its own ``AppTest`` of ``app.py`` (its own session state),
while ``st.cache_resource`` / ``st.cache_data`` are shared by all of them as on
one ``streamlit run`` server. Each session types its own sentences; after every
rerun the attention heatmap it shows is checked against a direct
``models.analysis.analyze`` of that session's sentence, so a result leaking
from one session into another is caught.
"""

from __future__ import annotations

import base64
import gc
import json
import logging
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from unittest.mock import MagicMock

import numpy as np
from streamlit.testing.v1 import AppTest

from bench.common import rss_bytes, sentence_of, summarize
from models.analysis import analyze

APP = Path(__file__).resolve().parents[1] / "app.py"
GROWTH_TARGET_MB = 50.0
# AppTest sessions driven from plain threads trip this harmless "bare mode" warning.
logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").setLevel(logging.ERROR)


def _array(z) -> np.ndarray:
    """A plotly JSON array (plain list, or typed ``{"dtype", "bdata", "shape"}``) as float."""
    if isinstance(z, dict) and "bdata" in z:
        arr = np.frombuffer(base64.b64decode(z["bdata"]), dtype=np.dtype(z["dtype"]))
        shape = z.get("shape")
        if isinstance(shape, str):
            shape = [int(s) for s in shape.split(",")]
        return arr.reshape(shape).astype(float) if shape else arr.astype(float)
    return np.array(z, dtype=float)


def shown_attention(at: AppTest) -> np.ndarray:
    """The big heatmap of the attention view: (T, T) weights of the selected head."""
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    return _array(spec["data"][0]["z"])


@contextmanager
def shared_runtime():
    """One mock Streamlit Runtime for all AppTest sessions, as on one server.

    ``AppTest`` swaps a fresh mock into the global ``Runtime._instance`` for each
    run and sets it back to None when the run ends, so two sessions running at
    once break each other ("Runtime hasn't been created!"). Inside this context
    the real global holds one shared mock for the whole benchmark, and
    ``AppTest``'s per-run swaps land on a throwaway subclass instead.
    """
    import streamlit.testing.v1.app_test as app_test_module
    from streamlit.components.v2.component_manager import BidiComponentManager
    from streamlit.runtime import Runtime
    from streamlit.runtime.caching.storage.dummy_cache_storage import (
        MemoryCacheStorageManager,
    )
    from streamlit.runtime.dataframe_source_manager import DataframeSourceManager
    from streamlit.runtime.media_file_manager import MediaFileManager
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
    from streamlit.testing.v1.util import patch_config_options

    shared = MagicMock(spec=Runtime)
    shared.media_file_mgr = MediaFileManager(MemoryMediaFileStorage("/mock/media"))
    shared.dataframe_source_mgr = DataframeSourceManager()
    shared.cache_storage_manager = MemoryCacheStorageManager()
    components = BidiComponentManager()
    components.discover_and_register_components(start_file_watching=False)
    shared.bidi_component_registry = components
    previous = Runtime._instance
    Runtime._instance = shared
    app_test_module.Runtime = type("PerRunRuntime", (Runtime,), {})
    try:
        with patch_config_options({"global.appTest": True}):
            yield
    finally:
        app_test_module.Runtime = Runtime
        Runtime._instance = previous


def concurrency(
    models: dict, sessions: int, reruns: int, per_session_sentences: int = 5, timeout: int = 300
) -> dict:
    """Run ``sessions`` AppTest sessions at once for ``reruns`` reruns in total.

    Args:
        models: kind -> shipped ``OnnxModel`` (used for the direct reference analysis).
        sessions: simultaneous sessions (alternating softmax and linear models).
        reruns: total reruns across sessions (each session does reruns // sessions).
        per_session_sentences: distinct sentences a session cycles through.

    Returns:
        Latency summary over all reruns (ms), RSS after warm-up and at the end (MB),
        growth, wrong-result count and whether the growth target was met.
    """
    kinds = list(models)
    apps, texts = [], []
    for i in range(sessions):
        kind = kinds[i % len(kinds)]
        at = AppTest.from_file(str(APP), default_timeout=timeout)
        at.query_params["model"] = kind
        at.query_params["view"] = "attention"
        apps.append((kind, at))
        texts.append(
            [
                sentence_of(models[kind], 4 + (i + j) % 17, seed=1000 * i + j)
                for j in range(per_session_sentences)
            ]
        )
    with shared_runtime():
        return _drive(models, apps, texts, sessions, reruns)


def _half_growth(trace: list) -> float | None:
    """RSS at the end minus RSS halfway through the reruns (MB): a leak keeps growing,
    allocator warm-up flattens out."""
    values = [v for v in trace if v is not None]
    return values[-1] - values[len(values) // 2] if len(values) > 1 else None


def _drive(models: dict, apps: list, texts: list, sessions: int, reruns: int) -> dict:
    """Warm every session up, then run all of them at once; see :func:`concurrency`."""
    for _, at in apps:  # warm-up: every session's first page load, and each sentence once
        at.run()
    for (_, at), mine in zip(apps, texts, strict=True):
        for text in mine:
            at.text_area(key="text").set_value(text).run()
    gc.collect()
    rss_start = rss_bytes()
    per = max(1, reruns // sessions)
    barrier = threading.Barrier(sessions)
    latencies: list[float] = []
    wrong: list[str] = []
    errors: list[str] = []
    trace: list[float | None] = []  # process RSS (MB) after each rerun, in finishing order
    lock = threading.Lock()

    def worker(i: int) -> None:
        kind, at = apps[i]
        barrier.wait()
        for j in range(per):
            text = texts[i][(j + 1) % len(texts[i])]
            start = time.perf_counter()
            try:
                at.text_area(key="text").set_value(text).run()
            except Exception as exc:  # a crashed session is a result, not a crash here
                with lock:
                    errors.append(f"session {i}: {exc!r}")
                return
            ms = (time.perf_counter() - start) * 1e3
            expected = analyze(models[kind], text).outputs["attn"][0, 0]  # (T, T)
            try:
                shown = shown_attention(at)
                ok = shown.shape == expected.shape and np.allclose(shown, expected, atol=1e-5)
            except (IndexError, KeyError, ValueError):
                ok = False
            rss = rss_bytes()
            with lock:
                latencies.append(ms)
                trace.append(None if rss is None else rss / 1e6)
                if at.exception or not ok:
                    wrong.append(f"session {i} rerun {j}")

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(sessions)]
    wall = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - wall
    gc.collect()
    rss_end = rss_bytes()
    growth = None if rss_start is None else (rss_end - rss_start) / 1e6
    return {
        "sessions": sessions,
        "reruns": len(latencies),
        "wall_s": wall,
        "latency": summarize(latencies) if latencies else None,
        "wrong_results": len(wrong),
        "wrong_examples": wrong[:5],
        "errors": errors[:5],
        "rss_after_warmup_mb": None if rss_start is None else rss_start / 1e6,
        "rss_end_mb": None if rss_end is None else rss_end / 1e6,
        "growth_mb": growth,
        "rss_trace_mb": trace[:: max(1, len(trace) // 50)],
        "growth_second_half_mb": _half_growth(trace),
        "target_growth_mb": GROWTH_TARGET_MB,
        "met": bool(growth is not None and growth < GROWTH_TARGET_MB and not wrong and not errors),
    }
