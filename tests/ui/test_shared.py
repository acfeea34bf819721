"""ui.shared.SharedCache: bounded, least recently used out, one computation per key."""

from __future__ import annotations

import threading
import time

import pytest

from ui.shared import SharedCache


def test_values_are_kept_and_the_least_recently_used_goes_first():
    cache = SharedCache(max_entries=2)
    assert cache.get("a", lambda: 1) == 1 and cache.get("b", lambda: 2) == 2
    assert cache.get("a", lambda: 99) == 1  # kept; now the most recently used
    cache.get("c", lambda: 3)
    assert cache.keys() == ["a", "c"] and len(cache) == 2  # "b" went
    cache.clear()
    assert len(cache) == 0


def test_sessions_asking_at_once_share_one_computation():
    cache, calls = SharedCache(max_entries=8), []

    def slow() -> object:
        calls.append(1)
        time.sleep(0.2)
        return object()

    got = []
    threads = [threading.Thread(target=lambda: got.append(cache.get("k", slow))) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len(got) == 6 and all(g is got[0] for g in got)


def test_a_failed_computation_keeps_nothing():
    cache = SharedCache(max_entries=8)

    def broken() -> object:
        raise ValueError("no")

    with pytest.raises(ValueError):
        cache.get("k", broken)
    assert len(cache) == 0 and cache.get("k", lambda: 5) == 5


def test_the_shipped_models_analyses_are_kept_within_their_bytes(monkeypatch):
    """A student pasting paragraphs (T = 64: about 6 MB an analysis of the linear model)
    fills the server's shared analyses up to ``SHIPPED_ANALYSES_BYTES``, not up to a count
    of them (issue #25); a sentence asked again comes from the cache, the same object."""
    from ui import loaders

    caches = {
        k: SharedCache(1024, 8 * 2**20, loaders.analysis_bytes) for k in ("analyses", "recurrent")
    }
    monkeypatch.setattr(loaders, "_shipped_caches", lambda: caches)
    words = ["the", "cat", "sat", "on", "mat", "mary", "john", "gave", "a", "drink", "to"]
    texts = [" ".join(words[(i + j) % len(words)] for j in range(64)) for i in range(4)]
    results = [loaders.get_analysis("linear", t) for t in texts]
    assert min(loaders.analysis_bytes(r) for r in results) > 2 * 2**20  # two fit, not four
    assert caches["analyses"].nbytes <= 8 * 2**20 and len(caches["analyses"]) < 4
    assert loaders.get_analysis("linear", texts[-1]) is results[-1]
    recurrent = loaders.get_recurrent("linear", results[-1])
    assert loaders.get_recurrent("linear", results[-1]) is recurrent and recurrent.recurrent


def test_the_shipped_models_figures_are_kept_within_their_bytes(monkeypatch):
    """Figure specs of the shipped models are bounded by bytes too (``SHIPPED_FIGURES_BYTES``,
    half for per-head and half for per-sentence figures): one student pasting paragraphs
    filled both counts and kept the server 85 MB larger (issue #25)."""
    from inference import view_specs as figs
    from ui import loaders, specs

    monkeypatch.setattr(specs, "SHIPPED_FIGURES_BYTES", 2 * 2**20)
    specs.shared.clear()
    words = ["the", "cat", "sat", "on", "mat", "mary", "john", "gave", "a", "drink", "to"]
    texts = [" ".join(words[(i + j) % len(words)] for j in range(64)) for i in range(8)]
    try:
        grids = [
            specs.get(figs.head_grid, "softmax", loaders.get_analysis("softmax", t)) for t in texts
        ]
        kept = specs.shared()["per_sentence"]
        assert min(specs.spec_bytes(g) for g in grids) > 2**18  # 8 of them pass 1 MB
        assert kept.nbytes <= 2**20 and 0 < len(kept) < len(texts)
        assert specs.shared()["per_head"].max_bytes == 2**20
    finally:
        specs.shared.clear()
