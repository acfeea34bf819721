"""Analyses on a model whose vocabulary has no alphabetic token at all."""

from __future__ import annotations

import numpy as np

from inference.analysis import analyze, head_table, induction_probe, probe_tokens
from inference.runtime import load_graphs
from models.tokenizer import UNK
from tests.helpers.checkpoints import DIGITS


def test_induction_probe_falls_back_to_non_special_tokens(digits_export):
    folder = digits_export[1]
    model = load_graphs(folder / "digits.inspect.onnx", folder / "digits.fast.onnx")
    vocab = model.tokenizer.get_vocab()
    assert not any(t.isalpha() for t in vocab if t != UNK)  # digits and punctuation only
    ids = probe_tokens(model)
    assert sorted(ids) == sorted(vocab[ch] for ch in DIGITS) and vocab[UNK] not in ids
    scores = induction_probe(model)  # (L, H); crashed on rng.choice([]) before
    assert scores.shape == (2, 2) and np.isfinite(scores).all()
    table = head_table(analyze(model, "12+3=15"), scores)
    assert len(table) == 4 and table["induction"].notna().all()
