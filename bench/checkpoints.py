"""Real checkpoints (issue #12): converting nanoGPT's 10M-parameter shakespeare-char
checkpoint with its optimizer state, every view of that model at its context of 256
tokens, and a GPT-2-small-sized model at T = 64 and 1024.

The views are the app's: its converted graphs are uploaded into an ``AppTest`` session
of ``app.py`` (the model runs in its isolated worker, as a student's upload does), and
each new sentence is typed, then every view picked (``bench.latency.new_sentences``).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from bench import gpt2_small
from bench.apptest import serving
from bench.common import EXPORTED
from bench.conversion import BABY_GPT, SHAKESPEARE_CHARS, cli_conversion, write_baby_checkpoint
from bench.latency import new_sentences
from bench.rerun import open_app, upload
from inference.runtime import load_graphs
from upload.local import convert_files

VIEWS_TARGET_MS = 1000.0  # issue #12: every view at T = 256 within 1 s on the 2-core CPU
QUICK_BABY = dict(BABY_GPT, n_layer=2, n_head=2, n_embd=32, block_size=32)
QUICK_GPT2 = dict(n_layer=2, n_head=2, n_embd=32, n_positions=64, vocab_size=300)


def views_at_context(args: dict, repeats: int) -> dict:
    """Median ms of a new sentence at the baby GPT's full context through every view of
    the app (the uploaded model beside the shipped ones), and of its analysis alone."""
    with tempfile.TemporaryDirectory(prefix="bench-views-") as tmp:
        ckpt, meta = write_baby_checkpoint(Path(tmp), args)
        written = convert_files({"ckpt.pt": ckpt, "meta.pkl": meta}, Path(tmp) / "out", onnx=True)
        graphs = {p.name.split(".")[-2]: p for p in written.graphs}
        model = load_graphs(graphs["inspect"], graphs.get("fast"), None, "baby GPT")
        T = model.config.context_length
        at = upload(open_app({}), {p.name: p.read_bytes() for p in written.graphs})
        texts = [
            "".join(SHAKESPEARE_CHARS[(7 * i + seed) % 65] for i in range(T))
            for seed in range(repeats + 1)
        ]
        row = new_sentences(at, model, texts)
    return {
        "T": T,
        "parameters": written.parameters,
        "arrays_ms": row["arrays"]["median_ms"],
        "total_ms": row["total"]["median_ms"],
        "views_ms": row["views_ms"],
        "n": repeats,
        "target_ms": VIEWS_TARGET_MS,
    }


def gpt2_rows(lengths: tuple[int, ...], sizes: dict | None, rounds: int) -> dict:
    """The GPT-2-small-sized random model (or ``sizes``) through the folder converter,
    then ``analyze`` at each T in a fresh process (time, peak memory)."""
    with tempfile.TemporaryDirectory(prefix="bench-gpt2-") as tmp:
        folder = gpt2_small.write_folder(Path(tmp) / "gpt2-small", **(sizes or {}))
        conversion = gpt2_small.convert(folder, Path(tmp) / "out")
        rows = [gpt2_small.measure(Path(tmp) / "out", "gpt2-small", T, rounds) for T in lengths]
    return {"conversion": conversion, "analyses": rows}


def checkpoints(folder: Path = EXPORTED, quick: bool = False) -> dict:
    """The section: ``conversion`` (``bench.conversion.cli_conversion``), ``views``
    (:func:`views_at_context`, the app serving the shipped models of ``folder``) and
    ``gpt2`` (:func:`gpt2_rows`)."""
    with serving(folder):
        views = views_at_context(QUICK_BABY if quick else BABY_GPT, 1 if quick else 5)
    return {
        "conversion": cli_conversion(1 if quick else 3, args=QUICK_BABY if quick else BABY_GPT),
        "views": views,
        "gpt2": gpt2_rows(
            (8, 32) if quick else (64, 1024), QUICK_GPT2 if quick else None, 1 if quick else 3
        ),  # fmt: skip
    }
