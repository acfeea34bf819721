"""Issue #24's rows: the command line on a busy computer, a long-context folder converted
with ``--context``, and a served GPT-2-small-sized model's server memory over many long
sentences.

    python -m bench --only served --merge     # rewrites these rows of the README table
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from bench import gpt2_small
from bench.checkpoints import QUICK_BABY, QUICK_GPT2
from bench.conversion import busy_cli_conversion
from bench.served_memory import served_memory

CONTEXT_FOLDER = dict(n_layer=2, n_head=4, n_embd=64)  # GPT-2's 50,257 ids, 1,024 positions


def context_conversion(context: int = 256, sizes: dict | None = None) -> dict:
    """A GPT-2 folder of 2 layers x 4 heads x 64 wide at context 1,024 (its full-context
    outputs: 263 MB, over the uploader's 256 MB) converted by ``upload.convert --context``:
    seconds, the upload file's size and whether the uploader accepts it."""
    from upload.folders import convert_folder

    with tempfile.TemporaryDirectory(prefix="bench-context-") as tmp:
        folder = gpt2_small.write_folder(Path(tmp) / "gpt2", **(sizes or CONTEXT_FOLDER))
        full = convert_folder(folder, Path(tmp) / "full", progress=False)
        start = time.perf_counter()
        done = convert_folder(folder, Path(tmp) / "short", progress=False, context=context)
        return {
            "seconds": time.perf_counter() - start,
            "context": context,
            "from_context": full.read.converted.cfg.context_length,
            "full_refusal": full.browser_refusal,
            "refusal": done.browser_refusal,
            "file_mb": done.path.stat().st_size / 1e6,
            "parameters": done.parameters,
        }


def served(quick: bool = False, base: Path | None = None) -> dict:
    """The section: ``busy_conversion``, ``context`` and ``memory`` (30 sentences of
    T = 1,024 on the served GPT-2-small-sized model; converted once into ``base``, by
    default ``$BENCH_SERVED_DIR`` when set, else a temporary folder)."""
    out = {
        "busy_conversion": busy_cli_conversion(1, QUICK_BABY, loops=1)
        if quick
        else busy_cli_conversion(3),
        "context": context_conversion(16, dict(QUICK_GPT2, n_positions=64))
        if quick
        else context_conversion(),
    }
    with tempfile.TemporaryDirectory(prefix="bench-served-") as tmp:
        folder = Path(base or os.environ.get("BENCH_SERVED_DIR") or tmp)
        out["memory"] = (
            served_memory(folder, 3, sizes=QUICK_GPT2) if quick else served_memory(folder, 30)
        )
    return out
