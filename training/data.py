"""The training data: lines of text, their token stream, random batches of windows, and
the tokenizer file written beside the checkpoint."""

from __future__ import annotations

import os
from pathlib import Path

import torch
from tokenizers import Tokenizer

from corpus.heldout import TRAIN_LINES, TRAIN_SEED, training_lines, validation_lines


def corpus_lines(corpus: Path | None) -> tuple[list[str], list[str], str]:
    """Training and validation lines, and a description of the data.

    The built-in corpus draws validation lines from another seed; a user file
    keeps its last 5% of lines (at least one) for validation.

    Raises:
        ValueError: if the file is empty or not UTF-8 text.
    """
    if corpus is None:
        description = f"built-in corpus (corpus/corpus.py), {TRAIN_LINES} lines, seed {TRAIN_SEED}"
        return training_lines(), validation_lines(), description
    try:
        text = Path(corpus).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{corpus} is not UTF-8 text") from exc
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise ValueError(f"{corpus} contains no text")
    n_valid = max(1, len(lines) // 20) if len(lines) > 1 else 0
    train, valid = lines[: len(lines) - n_valid], lines[len(lines) - n_valid :] or lines
    return train, valid, f"{Path(corpus).name}, {len(lines)} lines"


def token_stream(tokenizer: Tokenizer, lines: list[str]) -> torch.Tensor:
    """All lines tokenized and concatenated: int64 (N,)."""
    ids = [i for enc in tokenizer.encode_batch(lines, add_special_tokens=False) for i in enc.ids]
    return torch.tensor(ids, dtype=torch.long)


def batches(stream: torch.Tensor, batch_size: int, T: int, generator: torch.Generator):
    """Endless random windows: (inputs (B, T), targets (B, T)) shifted by one token.

    Raises:
        ValueError: if the stream is shorter than T + 1 tokens.
    """
    if len(stream) < T + 1:
        raise ValueError(f"corpus has {len(stream)} tokens, need at least {T + 1}")
    while True:
        starts = torch.randint(0, len(stream) - T, (batch_size,), generator=generator)  # (B,)
        window = torch.stack([stream[s : s + T + 1] for s in starts.tolist()])  # (B, T+1)
        yield window[:, :-1], window[:, 1:]


def write_tokenizer(path: Path, tokenizer: Tokenizer) -> None:
    """Write ``tokenizer`` as pretty JSON to ``path`` atomically (a temporary file, then a
    rename), so the two concurrent runs of ``make models`` never leave a torn file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(tokenizer.to_str(pretty=True), encoding="utf-8")
    os.replace(tmp, path)
