"""The translation models of the encoder-decoder lesson: training time (the card's
record, from ``make seq2seq``) and greedy translation latency per sentence at the
longest held-out length, on the ONNX graphs the app runs, through the app's path from text
to translation (``inference.seq2seq.translate_text``)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from corpus import translation
from inference.seq2seq import load_translator, translate_text
from models.seq2seq.config import SEQ2SEQ_KINDS


def translation_bench(folder: Path, repeats: int = 20) -> dict:
    """Per kind: ``training_s`` (wall time of its training, from the card), and the
    median / p95 ms of one greedy translation (encoder once, the step graph per output
    word) of held-out sentences of the longest held-out length, round-robin."""
    card = json.loads((folder / "seq2seq_card.json").read_text())
    longer = translation.splits(n_heldout=200).longer
    longest = max(len(p.source) for p in longer)
    sentences = [" ".join(p.source) for p in longer if len(p.source) == longest]
    out: dict = {"length": longest, "sentences": len(sentences), "models": {}}
    for kind in SEQ2SEQ_KINDS:
        model = load_translator(folder, kind)
        translate_text(model, sentences[0])  # warm up: the first run of each session
        times, words = [], []
        for i in range(repeats):
            start = time.perf_counter()
            words.append(len(translate_text(model, sentences[i % len(sentences)]).decoding.steps))
            times.append((time.perf_counter() - start) * 1e3)
        entry = card["models"][kind]
        out["models"][kind] = {
            "median_ms": float(np.median(times)),
            "p95_ms": float(np.percentile(times, 95)),
            "n": repeats,
            "output_steps": float(np.mean(words)),
            "training_s": entry["training"].get("wall_time_s"),
            "training_steps": entry["training"].get("steps"),
            "exact_match": entry["heldout"]["exact_match"],
        }
    return out
