"""The shipped models' training history, read for the app (numpy and onnxruntime only).

``exported/history/training_history.json`` (written by ``python -m training.history``)
holds, for each model, the measures of every kept checkpoint: ``steps``, ``val_loss``
(nats/token), ``icl_score`` (nats), ``prefix_matching`` (S, L, H), ``best_prefix_matching``,
``recall_n8`` (0..1), the ``phase_change_step`` (the first step whose best
prefix-matching score reaches ``phase_threshold``, or null) and the ``graph_steps`` whose
attention graphs ``<kind>.step<N>.onnx`` lie beside it (``export/history.py``: input_ids
(1, T) -> attn (L, H, T, T), the checkpoint's own weights).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from inference.sessions import make_session, run_session

HISTORY_FILE = "training_history.json"
# The measures drawn against the step, in the order the view draws them: key -> (title, unit)
CURVES = {
    "val_loss": ("Validation loss", "nats/token"),
    "icl_score": ("In-context learning score", "nats"),
    "best_prefix_matching": ("Best head's prefix-matching score", "score"),
    "recall_n8": ("Associative recall, n = 8 (top token)", "share"),
}


@dataclass(frozen=True)
class ModelHistory:
    """One model's history: ``steps`` (S,), each curve (S,) by key of :data:`CURVES`,
    ``prefix_matching`` (S, L, H), ``phase_change_step`` (int or None) and
    ``graph_steps``, the steps with an attention graph in ``folder``."""

    kind: str
    steps: list[int]
    curves: dict[str, list[float]]
    prefix_matching: np.ndarray
    phase_change_step: int | None
    graph_steps: list[int]
    folder: Path

    def graph_path(self, step: int) -> Path:
        """The attention graph of checkpoint ``step``.

        Raises:
            ValueError: if ``step`` has no graph (not one of ``graph_steps``).
        """
        if step not in self.graph_steps:
            raise ValueError(f"step {step} has no attention graph; one of {self.graph_steps}")
        return self.folder / f"{self.kind}.step{step}.onnx"


def load_history(folder: Path) -> tuple[dict, dict[str, ModelHistory]]:
    """``(header, kind -> ModelHistory)`` from ``folder/training_history.json``; the header
    holds ``recipe``, ``phase_threshold`` and ``recall_n``.

    Raises:
        FileNotFoundError: if the folder has no history file.
        ValueError: if a model's lists differ in length, or a graph it names is missing.
    """
    folder = Path(folder)
    raw = json.loads((folder / HISTORY_FILE).read_text())
    models = {}
    for kind, h in raw["models"].items():
        steps = list(h["steps"])
        curves = {key: list(h[key]) for key in CURVES}
        prefix = np.asarray(h["prefix_matching"], dtype=np.float64)  # (S, L, H)
        if any(len(c) != len(steps) for c in curves.values()) or len(prefix) != len(steps):
            raise ValueError(f"{HISTORY_FILE}: {kind}'s measures and steps differ in length")
        history = ModelHistory(
            kind, steps, curves, prefix, h["phase_change_step"], list(h["graph_steps"]), folder
        )
        if missing := [s for s in history.graph_steps if not history.graph_path(s).exists()]:
            raise ValueError(f"{folder}: no attention graph for {kind} at steps {missing}")
        models[kind] = history
    header = {k: v for k, v in raw.items() if k != "models"}
    return header, models


class HistoryGraph:
    """The attention graph of one kept checkpoint (an onnxruntime session)."""

    def __init__(self, path: Path):
        self.session = make_session(path)

    def attention(self, ids: list[int]) -> np.ndarray:
        """Token ids (T,) -> attention weights (L, H, T, T) of this checkpoint.

        Raises:
            inference.sessions.ModelRunError: onnxruntime's error, in one line (an id
                outside the vocabulary, T over the context length).
        """
        feed = {"input_ids": np.asarray([ids], dtype=np.int64)}  # (1, T)
        return run_session(self.session, ["attn"], feed)[0]  # (L, H, T, T)
