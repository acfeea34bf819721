"""The held-out grammar probes of the model card (``corpus/heldout.py``): agreement,
indirect object and pronoun accuracy, on the probes whose words a model's vocabulary
has. A model trained with ``--corpus`` has its own vocabulary; a built-in probe with a
word outside it measures nothing and is skipped, and the card says which."""

from __future__ import annotations

import torch
from tokenizers import Tokenizer

from corpus.heldout import probe_set
from models.tokenizer import encode
from models.transformer import Transformer

PROBE_KINDS = ("agreement", "ioi", "pronoun")
MISSING_SHOWN = 12  # words a skipped probe kind lacks, named in the card and the output


def known_probes(
    tokenizer: Tokenizer, probes: list[tuple[str, str, str]]
) -> tuple[list[tuple[str, str, str]], list[str]]:
    """The probes whose words the vocabulary has (both answers single tokens, no prefix
    word unknown or split into pieces), and the sorted words it lacks. A model trained
    with ``--corpus`` has its own vocabulary: a built-in probe with a word outside it
    measures nothing."""
    vocab, kept, lacking = tokenizer.get_vocab(), [], set()
    for probe in probes:
        prefix, correct, wrong = probe
        enc = encode(tokenizer, prefix)
        missing = {w for w in (correct, wrong) if w.lower() not in vocab}
        missing |= set(enc.unknown_words)
        if missing:
            lacking |= missing
        else:
            kept.append(probe)
    return kept, sorted(lacking)


@torch.no_grad()
def probe_accuracy(
    model: Transformer, tokenizer: Tokenizer, probes: list[tuple[str, str, str]]
) -> float:
    """Share of ``(prefix, correct, wrong)`` probes where the next-token logit of
    ``correct`` beats ``wrong`` at the prefix's last position (0..1).

    Raises:
        ValueError: if a probe's answer is not a single known token (:func:`known_probes`
            keeps only those that are).
    """
    vocab = tokenizer.get_vocab()
    hits = 0
    for prefix, correct, wrong in probes:
        ids = tokenizer.encode(prefix, add_special_tokens=False).ids
        ids = ids[-model.cfg.context_length :]
        a, b = vocab.get(correct.lower()), vocab.get(wrong.lower())
        if a is None or b is None:
            raise ValueError(f"probe answer {correct!r}/{wrong!r} is not a single token")
        logits = model(torch.tensor([ids]))[0, -1]  # (V,)
        hits += int(logits[a] > logits[b])
    return hits / len(probes)


def held_out_probes(model: Transformer, tokenizer: Tokenizer, n_probes: int) -> dict:
    """The three held-out probe accuracies on the probes whose words the vocabulary has
    (None for a kind without one), how many each used, and what was skipped and why."""
    out: dict = {}
    for kind in PROBE_KINDS:
        kept, lacking = known_probes(tokenizer, probe_set(kind, n_probes))
        out[f"{kind}_accuracy"] = probe_accuracy(model, tokenizer, kept) if kept else None
        if lacking:  # the shipped models lack none: their card keeps its keys
            skipped = n_probes - len(kept)
            out.setdefault("probes_skipped", {})[kind] = {
                "skipped": skipped, "used": len(kept), "missing_words": lacking[:MISSING_SHOWN],
            }  # fmt: skip
            more = (
                f" and {len(lacking) - MISSING_SHOWN} more" if len(lacking) > MISSING_SHOWN else ""
            )
            print(
                f"skipped {skipped} of {n_probes} {kind} probes: the vocabulary lacks "
                f"{', '.join(repr(w) for w in lacking[:MISSING_SHOWN])}{more}"
            )
    return out
