"""App latency, server side: reruns of the app, and every view's cost without Streamlit.

``rerun`` (``bench/rerun.py``): the visualizer's real reruns in one AppTest session, a
layer/head change (cold and warm cache; target <= 50 ms) and a new sentence to the
view on screen (target <= 150 ms), per model and view.

Then, per model and sentence length T, each timed call gets a sentence it has not seen
(no cache involved) and measures

* ``arrays``: ``analyze()``, the model's arrays for every view (the linear model's
  recurrent form is timed in the mask view, the only one that shows it);
* ``views``: every view's figures and tables built from those arrays by the app's own
  builders (``inference.view_specs``; the head-statistics table with ``head_table()``)
  and serialized as Streamlit sends them (``bench/views.py``), plus the other shipped
  model's analysis that the compare and mask views need;
* ``total``: both, i.e. what a new sentence would cost if every view were drawn (a
  rerun draws the view on screen only: reported, no target).

Streamlit itself is not called in that timed path.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from bench.common import EXPORTED, sentence_of
from bench.rerun import reruns
from bench.views import Facts, Page, build_all
from inference.analysis import analyze
from inference.measure import summarize

LATENCY_TARGET_MS = 150.0


def _one(page_of, text: str) -> tuple[float, float, dict[str, float]]:
    """(arrays ms, total ms, per-builder ms) for one new sentence."""
    start = time.perf_counter()
    page = page_of(text)
    arrays = (time.perf_counter() - start) * 1e3
    items = build_all(page)
    return arrays, (time.perf_counter() - start) * 1e3, items


def app_latency(
    models: dict,
    lengths: list[int],
    repeats: int,
    folder: Path = EXPORTED,
    rerun_sentences: int = 2,
) -> dict:
    """App reruns (``rerun``), then arrays, figures + JSON and their total for
    ``repeats`` new sentences per T.

    Args:
        models: ``{"softmax": OnnxModel, "linear": OnnxModel}`` (both: the compare view).
        lengths: sentence lengths T in tokens; the reruns use the largest.
        repeats: timed sentences per model and T (after one untimed warm-up).
        folder: the graphs the app serves for the reruns (``models`` come from there).
        rerun_sentences: new sentences per model and view in ``rerun``.

    Returns:
        ``rerun`` (:func:`bench.rerun.reruns`), ``{kind: {T: {"arrays", "views", "total":
        {"median_ms", "p95_ms", ...}, "builders_ms": {"view: builder": median ms}}}}``,
        ``target_ms`` (the view on screen), ``met`` (the reruns' targets) and
        ``slowest_builder`` (the largest median item at the largest T, per model).
    """
    out: dict = {
        "target_ms": LATENCY_TARGET_MS,
        "what": "new sentence -> analyze() + every view's figures and tables (the app's builders) serialized "
        "as Streamlit sends them (plotly JSON, altair spec + Arrow, tables as Arrow); server side",
        "rerun": reruns(models, folder, max(lengths), rerun_sentences),
    }
    slowest = {}
    facts = {kind: Facts.of(kind, model) for kind, model in models.items()}  # once per server
    for kind, model in models.items():

        def page_of(text, kind=kind, model=model):
            result = analyze(model, text, recurrent=False)  # as the app: for the mask view only
            return Page(kind, models, result, facts)

        rows = {}
        for T in lengths:
            texts = [sentence_of(model, T, seed=s) for s in range(repeats + 1)]
            _one(page_of, texts[0])  # warm-up
            arrays, total, items = [], [], []
            for text in texts[1:]:
                a, t, b = _one(page_of, text)
                arrays.append(a)
                total.append(t)
                items.append(b)
            builders = {k: float(np.median([b[k] for b in items])) for k in items[0]}
            row = {
                "arrays": summarize(arrays),
                "views": summarize([t - a for a, t in zip(arrays, total, strict=True)]),
                "total": summarize(total),
                "builders_ms": dict(sorted(builders.items(), key=lambda kv: -kv[1])),
            }
            rows[str(T)] = row
        out[kind] = rows
        top_T = str(max(lengths))
        name, ms = next(iter(rows[top_T]["builders_ms"].items()))
        slowest[kind] = {"T": int(top_T), "builder": name, "median_ms": ms}
    out["met"] = bool(out["rerun"]["met"] and out["rerun"]["new_sentence_met"])
    out["slowest_builder"] = slowest
    return out
