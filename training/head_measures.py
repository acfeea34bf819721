"""Per-head measures of a torch model on held-out text, for the model card: every head's
statistics and automatic label (``inference.head_stats``, ``inference.head_labels``) and
the smallest attention row sum per head (``training/evaluate.py``)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from tokenizers import Tokenizer

from corpus.corpus import generate_corpus
from corpus.heldout import validation_lines
from inference import head_labels, head_stats
from models.transformer import Transformer

ROW_SUM_LINES = 500  # held-out validation lines for the smallest attention row sum


@torch.no_grad()
def head_scores(
    model: Transformer, tokenizer: Tokenizer, seed: int = 4, lines: list[str] | None = None
) -> dict:
    """Per-head scores, each a nested list (L, H), averaged over inputs.

    Sentence statistics use ``lines`` (default: 64 held-out corpus lines); the induction
    score is
    :func:`inference.head_stats.induction_probe`, the app's own (same period, blocks,
    token choice and seed); the labels use the app's rule too, with the lines' mean
    length as T.
    """
    lines = lines[:64] if lines else generate_corpus(64, seed=seed + 20_011)
    sums: dict[str, np.ndarray] = {}
    lengths = []
    for line in lines:
        ids = tokenizer.encode(line, add_special_tokens=False).ids[: model.cfg.context_length]
        if len(ids) < 3:
            continue
        lengths.append(len(ids))
        attn = model(torch.tensor([ids]), inspect=True)[1]["attn"].numpy()  # (L, H, T, T)
        stats = {
            "previous_token": head_stats.previous_token_score(attn),
            "first_token": head_stats.first_token_score(attn),
            "distance": head_stats.mean_attention_distance(attn),
            "entropy": head_stats.entropy(attn),
        }
        for name, value in stats.items():
            sums.setdefault(name, []).append(value)
    scores = {name: np.mean(values, axis=0) for name, values in sums.items()}
    special = {a.content for a in tokenizer.get_added_tokens_decoder().values() if a.special}
    words = head_stats.probe_word_ids(tokenizer.get_vocab(), model.cfg.vocab_size, special)
    scores["induction"] = head_stats.induction_probe(
        lambda ids: model(torch.tensor([ids]), inspect=True)[1]["attn"].numpy(),  # (L,H,T,T)
        words,
        model.cfg.context_length,
    )  # the app's seed (0), not this function's: the same blocks as the app
    labels = head_labels.label_heads(scores, n_tokens=round(float(np.mean(lengths))))
    out = {name: np.round(value, 4).tolist() for name, value in scores.items()}
    out["labels"] = np.asarray(labels).tolist()
    return out


def held_out_min_row_sum(
    attn_of: Callable[[list[int]], np.ndarray],
    tokenizer: Tokenizer,
    context_length: int,
    n_lines: int = ROW_SUM_LINES,
    lines: list[str] | None = None,
) -> np.ndarray:
    """(L, H) smallest attention row sum over every query of the first ``n_lines``
    held-out validation lines (``models/heldout.py``), each line run alone (as a typed
    sentence is) and cut to ``context_length`` tokens.

    ``attn_of(ids)`` returns the (L, H, T, T) ``attn`` for a list of T token ids: the
    torch model's inspect cache here, the exported inspect graph in the tests.
    """
    mins = None
    for line in (lines or validation_lines())[:n_lines]:
        ids = tokenizer.encode(line, add_special_tokens=False).ids[:context_length]
        if ids:
            row = head_stats.min_row_sum(attn_of(ids))  # (L, H)
            mins = row if mins is None else np.minimum(mins, row)
    return mins
