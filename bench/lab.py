"""The lab's costs (issue #45): an ablation rerun of the app, the head importance grid, and
the patching grids over heads and over residual cells, for the softmax and delta models at
T = 16 and 64.

* ``rerun_ms``: one ``AppTest`` session of ``app.py`` on ``view=ablate`` with a sentence of
  T tokens; after one untimed run (the importance grids computed and kept, as for any
  sentence the class has seen), the ablated heads change and the rerun is timed
  (``AppTest.run()``'s wall clock, as in ``bench/rerun.py``): one ablation of two runs,
  the figures, the table.
* ``grid_ms``: ``inference.lab.importance_grid`` called directly (L·H + 1 runs).
* ``patch_heads_ms`` / ``patch_resid_ms``: ``inference.patching`` on the indirect-object
  pair cut or padded to T tokens (L·H runs; (L+1)·T runs).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from bench.apptest import serving
from bench.common import sentence_of, shipped
from bench.rerun import open_app
from inference import lab, patching
from inference.measure import summarize

KINDS = ("softmax", "delta")
LENGTHS = (16, 64)
RERUN_TARGET_MS, GRID_TARGET_MS = 100.0, 1000.0
PATCH_HEADS_TARGET_MS, PATCH_RESID_TARGET_MS = 1000.0, 2000.0  # resid: at T = 16


def _timed(fn, repeats: int) -> dict:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return summarize(times)


def _reruns(kind: str, text: str, repeats: int) -> dict:
    at = open_app({"view": "ablate", "model": kind, "text": text})
    picks = ["0.0", "1.3", "2.1", "1.0"]
    times = []
    for i in range(repeats + 1):
        at.multiselect(key="ablate_heads").set_value([picks[i % len(picks)]])
        start = time.perf_counter()
        at.run()
        if at.exception:
            raise RuntimeError(f"the app failed: {at.exception[0].value}")
        if i:  # the first one opens the view's figures
            times.append((time.perf_counter() - start) * 1e3)
    return summarize(times)


def _pair(model, T: int) -> tuple[list[int], list[int], int, int]:
    clean, corrupted, correct, wrong = patching.default_pair(model.tokenizer)
    enc = model.tokenizer.encode
    a, b = enc(clean).ids, enc(corrupted).ids
    if len(a) > T:  # keep the end, where the answer is predicted
        a, b = a[-T:], b[-T:]
    pad = enc(sentence_of(model, T - len(a), seed=3)).ids if T > len(a) else []
    return pad + a, pad + b, enc(correct).ids[0], enc(wrong).ids[0]


def lab_bench(folder: Path, repeats: int = 10) -> dict:
    """Every row's numbers: kind -> T -> {rerun, grid, patch_heads[, patch_resid]}."""
    out: dict = {"repeats": repeats, "models": {}}
    with serving(folder):
        for kind in KINDS:
            model = shipped(kind, folder)
            rows = out["models"][kind] = {}
            for T in LENGTHS:
                text = sentence_of(model, T, seed=1)
                ids = model.tokenizer.encode(text).ids
                pair = _pair(model, T)
                row = rows[str(T)] = {
                    "rerun": _reruns(kind, text, repeats),
                    "grid": _timed(lambda m=model, i=ids: lab.importance_grid(m, i), repeats),
                    "patch_heads": _timed(
                        lambda m=model, p=pair: patching.patch_heads(m, *p), repeats
                    ),  # fmt: skip
                }
                if T == LENGTHS[0]:
                    row["patch_resid"] = _timed(
                        lambda m=model, p=pair: patching.patch_residual(m, *p), repeats
                    )
                row["grid_shape"] = list(np.shape(lab.importance_grid(model, ids)))
    return out
