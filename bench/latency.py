"""App latency, server side: reruns of the app, and a new sentence through every view.

``rerun`` (``bench/rerun.py``): the visualizer's real reruns in one AppTest session, a
layer/head change (cold and warm cache; target <= 50 ms) and a new sentence to the
view on screen (target <= 150 ms), per model and view.

Then, per model and sentence length T, each timed sentence is one the app has not seen
(no cache involved), and the bench calls the app, never a copy of it:

* ``views``: the sentence typed on the first view, then every other view the app offers
  picked once, each rerun timed (``bench.rerun.every_view``: ``AppTest.run()``, the
  whole script on the server and the other model's analysis where the compare and mask
  views need it);
* ``total``: their sum, i.e. what a new sentence costs a student who visits every view
  (a rerun draws the view on screen only: reported, no target);
* ``arrays``: ``analyze()`` of the same sentence called directly, the share of the model.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from bench.apptest import serving
from bench.common import EXPORTED, sentence_of
from bench.rerun import app_views, every_view, open_app, reruns
from inference.analysis import analyze
from inference.measure import summarize

LATENCY_TARGET_MS = 150.0


def arrays_ms(model, text: str) -> float:
    """Milliseconds of ``analyze()`` (every view's arrays) of ``text``, called directly."""
    start = time.perf_counter()
    analyze(model, text, recurrent=False)  # as the app: recurrent for the mask view only
    return (time.perf_counter() - start) * 1e3


def new_sentences(at, model, texts: list[str]) -> dict:
    """Every view of ``at`` for each of ``texts`` after the first (a warm-up): ``arrays``,
    ``total`` (``summarize()``) and ``views_ms`` (view -> median ms of its rerun)."""
    views = app_views(at)
    every_view(at, texts[0], views)  # warm-up
    arrays, per_view = [], []
    for text in texts[1:]:
        arrays.append(arrays_ms(model, text))
        per_view.append(every_view(at, text, views))
    return {
        "arrays": summarize(arrays),
        "total": summarize([sum(v.values()) for v in per_view]),
        "views_ms": {view: float(np.median([v[view] for v in per_view])) for view in views},
    }


def app_latency(
    models: dict,
    lengths: list[int],
    repeats: int,
    folder: Path = EXPORTED,
    rerun_sentences: int = 2,
) -> dict:
    """App reruns (``rerun``), then every view of ``repeats`` new sentences per T.

    Args:
        models: ``{"softmax": OnnxModel, "linear": OnnxModel}`` (both: the compare view).
        lengths: sentence lengths T in tokens; the reruns use the largest.
        repeats: timed sentences per model and T (after one untimed warm-up).
        folder: the graphs the app serves (``models`` come from there).
        rerun_sentences: new sentences per model and view in ``rerun``.

    Returns:
        ``rerun`` (:func:`bench.rerun.reruns`), ``{kind: {T: new_sentences()}}``,
        ``target_ms`` (the view on screen) and ``met`` (the reruns' targets).
    """
    out: dict = {
        "target_ms": LATENCY_TARGET_MS,
        "what": "new sentence -> every view of the app once (AppTest reruns: the sentence "
        "typed on the first view, then each other view picked), server side",
        "rerun": reruns(models, folder, max(lengths), rerun_sentences),
    }
    with serving(folder):
        for kind, model in models.items():
            at = open_app({"model": kind})
            out[kind] = {
                str(T): new_sentences(
                    at, model, [sentence_of(model, T, seed=s) for s in range(repeats + 1)]
                )
                for T in lengths
            }
    out["met"] = bool(out["rerun"]["met"] and out["rerun"]["new_sentence_met"])
    return out
