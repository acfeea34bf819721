"""The translation section runs at tiny sizes on real exported graphs and renders."""

from __future__ import annotations

import json

import pytest

from bench.report import render
from bench.translation import translation_bench
from training.evaluate_seq2seq import evaluate


@pytest.mark.slow
def test_translation_section_measures_and_renders(tiny_seq2seq, tmp_path):
    folder = tiny_seq2seq[0]
    card = evaluate(folder, n=3)  # the real evaluation, on 3 sentences per set
    (folder / "seq2seq_card.json").write_text(json.dumps(card))
    data = translation_bench(folder, repeats=2)
    assert set(data["models"]) == {"gru", "bahdanau", "transformer"}
    assert 17 <= data["length"] <= 23 and all(m["n"] == 2 for m in data["models"].values())
    text = render({"machine": {}, "translation": data})
    # #20 item 13: the timed sentences are ones the encoder reads whole (max_src - 1 words)
    assert "Greedy translation of one sentence" in text and "Training time, Transformer" in text
