"""Rows and notes of the ``lab`` section: ablation and activation patching (issue #45)."""

from __future__ import annotations

from bench.sections.format import _mp, yes

TARGETS = {  # what, target (ms), rows measured at (T values; None: every T)
    "rerun": ("An ablation rerun of the app (`AppTest.run()`, view=ablate, heads changed)",
              100.0, None),
    "grid": ("Head importance grid (L·H + 1 ablated runs)", 1000.0, None),
    "patch_heads": ("Patching grid over heads (L·H runs)", 1000.0, None),
    "patch_resid": ("Patching grid over residual cells ((L+1)·T runs)", 2000.0, (16,)),
}  # fmt: skip


def lab(data: dict, results: dict) -> list[tuple]:
    """One row per measure, model and length: median and p95 against the target."""
    out = []
    for key, (what, target, at) in TARGETS.items():
        for kind, rows in data.get("models", {}).items():
            for T, row in rows.items():
                if key not in row or (at is not None and int(T) not in at):
                    continue
                median = row[key]["median_ms"]
                out.append((f"{what}, {kind}, T = {T}", f"median <= {target:,.0f} ms",
                            _mp(row[key]), yes(median <= target)))  # fmt: skip
    return out


def lab_notes(data: dict) -> list[str]:
    """How the lab rows were measured."""
    return [
        "Lab: `bench/lab.py`, the shipped models' lab graphs (`<kind>.lab.onnx`); "
        f"{data.get('repeats', '?')} repeats each. The rerun changes the ablated heads of a "
        "view already open on the sentence (its importance grids computed once and kept per "
        "sentence, as every session shares them); the grids are called directly, "
        "uncached. The patching pair is the indirect-object pair, its start cut or padded "
        "with random words to T tokens. The delta model's lab graph takes one run a call "
        "(its token scan cannot carry a symbolic batch), so its grids are L·H + 1 calls."
    ]
