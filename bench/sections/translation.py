"""Rows and notes of the ``translation`` section: the encoder-decoder lesson's models."""

from __future__ import annotations

from bench.sections.format import _mp, yes

NAMES = {"gru": "GRU (fixed context)", "bahdanau": "GRU + Bahdanau", "transformer": "Transformer"}
TRAINING_LIMIT_S = 20 * 60  # issue #10: each model trains in at most 20 min on the 2-core CPU


def translation(data: dict, results: dict) -> list[tuple]:
    """Training time per model and greedy translation latency at the longest length."""
    out = []
    for kind, m in data.get("models", {}).items():
        seconds = m.get("training_s")
        out.append(
            (
                f"Training time, {NAMES.get(kind, kind)} ({m.get('training_steps', '?')} steps, "
                "`make seq2seq`)",
                "<= 20 min on the 2-core CPU",
                "n/a" if seconds is None else f"{seconds / 60:.1f} min",
                yes(None if seconds is None else seconds <= TRAINING_LIMIT_S),
            )
        )
    for kind, m in data.get("models", {}).items():
        out.append(
            (
                f"Greedy translation of one sentence of {data['length']} words, "
                f"{NAMES.get(kind, kind)} (ONNX)",
                "reported",
                f"{_mp(m)} ({m['output_steps']:.0f} decoder steps)",
                "",
            )
        )
    return out


def translation_notes(data: dict) -> list[str]:
    """How the translation rows were measured."""
    return [
        "Translation: training times are the wall times `make seq2seq` recorded in "
        "`exported/seq2seq_card.json` (the two RNNs trained at once, one thread each, "
        "then the transformer on two); latency is `inference.seq2seq.translate_text` "
        "(the app's path: the text read as the app reads it, the encoder "
        f"once, the step graph per output word, greedy) over {data.get('sentences', '?')} "
        f"held-out sentences of {data.get('length', '?')} words, round-robin."
    ]
