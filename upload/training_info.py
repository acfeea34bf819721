"""A checkpoint's training record as plain, bounded data, and its line on the model card.

Both sides use it: the worker keeps only plain values of what a file says about its
training (nanoGPT's ``iter_num``, ``best_val_loss`` and ``config``; the ``training``
metadata of our ``.safetensors``), and the server keeps only plain values of what the
worker answers. Nothing here parses bytes.
"""

from __future__ import annotations

import math

MAX_ENTRIES = 64  # keys kept per dict
MAX_KEY_CHARS = 64
MAX_TEXT_CHARS = 200  # a string value is cut to this


def _scalar(value: object) -> object:
    """``value`` if it is a plain JSON scalar (finite numbers, strings cut to
    MAX_TEXT_CHARS), else ``...`` (Ellipsis: leave it out)."""
    if value is None or type(value) in (bool, int):
        return value
    if type(value) is float:
        return value if math.isfinite(value) else ...
    if type(value) is str:
        return value[:MAX_TEXT_CHARS]
    return ...


def plain_training(record: object, depth: int = 0) -> dict:
    """The plain part of a training record: at most MAX_ENTRIES string keys per dict,
    scalar values (finite numbers, bools, None, short strings) and, one level down, dicts
    of them (nanoGPT's ``config``); anything else is left out, never refused."""
    if not isinstance(record, dict):
        return {}
    out: dict = {}
    for key, value in list(record.items())[: 4 * MAX_ENTRIES]:
        if len(out) >= MAX_ENTRIES:
            break
        if type(key) is not str or not 0 < len(key) <= MAX_KEY_CHARS:
            continue
        if isinstance(value, dict) and depth == 0:
            out[key] = plain_training(value, depth + 1)
        elif (kept := _scalar(value)) is not ...:
            out[key] = kept
    return out


def training_note(training: dict) -> str | None:
    """One sentence for the model card about where a checkpoint's weights come from
    (a nanoGPT run: iteration, best validation loss, dataset), or None."""
    if training.get("source") != "nanoGPT":
        return None
    parts = []
    if type(training.get("iter_num")) is int:
        parts.append(f"saved at iteration {training['iter_num']:,}")
    if type(training.get("best_val_loss")) is float:
        parts.append(f"best validation loss {training['best_val_loss']:.4f}")
    config = training.get("nanogpt_config")
    dataset = config.get("dataset") if isinstance(config, dict) else None
    if type(dataset) is str:
        parts.append(f"dataset {dataset}")
    where = training.get("converted_from")
    source = f" ({where})" if type(where) is str else ""
    return f"Trained with nanoGPT{source}" + (": " + ", ".join(parts) if parts else "") + "."


def context_note(training: dict, context: int) -> str | None:
    """The model card's sentence for a context shortened when converted
    (``upload.convert --context``: the record's ``context_from``), or None."""
    longer = training.get("context_from")
    if type(longer) is not int or longer <= context:
        return None
    return (
        f"Context shortened from {longer:,} to {context:,} tokens when converted "
        "(--context): every weight unchanged (a learned position table keeps its first rows)."
    )
