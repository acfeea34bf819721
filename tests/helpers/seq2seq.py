"""Tiny random translation models of each kind, exported to ONNX (shared by the export,
inference and UI tests)."""

from __future__ import annotations

from pathlib import Path

TINY = {"d_model": 16, "n_layer": 1, "n_head": 2, "d_mlp": 32}


def tiny_translators(folder: Path, export: bool = True) -> dict:
    """kind -> (torch model in eval mode, vocabularies), each exported into ``folder``
    with the same file names as the shipped ones, and a card for the app; with
    ``export=False`` the same models (seed 0) only, for a folder already written."""

    import torch

    from export.seq2seq import export_seq2seq
    from models.seq2seq import build_seq2seq
    from models.seq2seq.config import SEQ2SEQ_KINDS, Seq2SeqConfig
    from training.seq2seq import save, vocabularies

    vocabs = vocabularies()
    out = {}
    for kind in SEQ2SEQ_KINDS:
        torch.manual_seed(0)
        size = TINY if kind == "transformer" else {"d_model": 16}
        cfg = Seq2SeqConfig(kind, vocabs[0].get_vocab_size(), vocabs[1].get_vocab_size(), **size)
        model = build_seq2seq(cfg).eval()
        if not export:
            out[kind] = (model, vocabs)
            continue
        export_seq2seq(model, vocabs, folder)
        save(folder / f"seq2seq_{kind}.safetensors", model, cfg, vocabs, {"steps": 0})
        out[kind] = (model, vocabs)
    return out
