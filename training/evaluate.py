"""Held-out probes and per-head scores, handed to the model card writer (``export/card.py``).

    python -m training.evaluate                      # the shipped models -> exported/model_card.json
    python -m training.evaluate runs/mine.safetensors --card runs/card.json
    python -m training.evaluate exported/delta.safetensors --add   # one more model; the
                                                     # card's other entries stay as they are

Probes (``corpus/heldout.py``): drawn from ``corpus/corpus.py`` with seeds the training
text never uses, keeping only those whose prefix followed by the correct answer occurs
nowhere in the training text, 500 of each kind:

* agreement accuracy: share of prefixes where p(correct verb form) > p(wrong form),
  e.g. "the keys to the old cabinet" -> "are" vs "is";
* indirect-object (IOI) accuracy: p(indirect object) > p(repeated subject) after
  "when Mary and John went to the store , John gave a drink to";
* pronoun accuracy: p(she) > p(he) after "Mary lost her keys because".

Per-head scores (``inference/head_stats.py``), averaged over inputs: previous-token,
first-token, ``distance`` (mean attention distance, tokens), ``entropy`` (bits) on held-out
sentences, and the induction score on random token sequences repeated twice
(Olsson et al. 2022, "In-context Learning and Induction Heads").

Behavioural scores, from the logits alone: the behavioural induction score
(``inference/behaviour.py``: mean loss on the second copy of a repeated random word
sequence vs the first; Olsson et al. 2022) and associative recall against the number of
pairs n (``inference/recall.py``, ``recall``: n -> share of ``RECALL_SEQUENCES`` examples
right, counted as the top token over the whole vocabulary and, second, by the ranking
rule; on the trained format and on held-out words no recall row holds).

Smallest row sum (``min_row_sum``, and ``min_row_sum_per_head``): min over every query
of the first ``ROW_SUM_LINES`` held-out validation lines, each run alone, of the sum of its
attention weights. 1 for softmax; for linear attention row i sums to
phi(q_i)^T z_i / (phi(q_i)^T z_i + eps), below 1 where the normalizer is near eps.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np
import torch
from tokenizers import Tokenizer
from tqdm import tqdm

from corpus.heldout import N_PROBES, validation_lines
from export.card import write_card
from inference import behaviour, recall
from models.card import ModelCard
from models.checkpoint import SHIPPED_DIR, load_checkpoint, shipped_checkpoint
from models.config import SHIPPED_KINDS
from models.transformer import Transformer
from training.data import corpus_lines, token_stream
from training.head_measures import ROW_SUM_LINES, head_scores, held_out_min_row_sum
from training.loss import evaluate_loss, scored_windows
from training.probes import held_out_probes
from training.recall_rows import max_pairs

# what the progress bar names, in order (:func:`evaluate`)
STAGES = ("held-out loss", "head statistics", "row sums", "recall", "induction", "probes")


def _progress(desc: str):
    """A progress bar over :data:`STAGES` (a stage takes seconds to minutes): each
    ``next()`` names the stage starting; exhausting it completes the bar."""
    with tqdm(total=len(STAGES), desc=desc, unit="stage") as bar:
        for name in STAGES:
            bar.set_postfix_str(name)
            yield name
            bar.update(1)


@torch.no_grad()
def evaluate(
    model: Transformer,
    tokenizer: Tokenizer,
    n_probes: int = N_PROBES,
    valid_lines: list[str] | None = None,
) -> dict:
    """All probe results for one model (accuracies 0..1, loss in nats/token), and the
    smallest attention row sum on held-out lines, overall and per head (L, H).

    ``valid_lines``: the held-out text for the perplexity, the row sums and the head
    statistics (a ``--corpus`` model's own, :func:`training.data.corpus_lines`); default
    the built-in corpus's. Probes whose words the vocabulary lacks are skipped
    (:func:`training.probes.known_probes`; ``probes_skipped`` says which), and a probe kind without one
    gets None; recall and induction use the model's own vocabulary.
    """
    stage = _progress(f"evaluate {model.cfg.attention}")
    lines = valid_lines or validation_lines()
    next(stage)
    valid = token_stream(tokenizer, lines)
    val_loss = evaluate_loss(model, valid, model.cfg.context_length, max_windows=None)
    windows, window = scored_windows(len(valid), model.cfg.context_length)  # tokens each
    val_tokens = {"windows": windows, "window": window, "scored": windows * window}
    val_tokens["of"] = len(valid)  # the held-out stream's tokens
    next(stage)
    heads = head_scores(model, tokenizer, lines=valid_lines)
    best = np.unravel_index(np.argmax(heads["induction"]), np.shape(heads["induction"]))
    next(stage)
    row_sums = held_out_min_row_sum(
        lambda ids: model(torch.tensor([ids]), inspect=True)[1]["attn"].numpy(),
        tokenizer,
        model.cfg.context_length,
        lines=valid_lines,
    )  # (L, H)

    def logits_of(ids: list[int]) -> np.ndarray:
        return model(torch.tensor([ids]))[0].numpy()  # (T, V)

    next(stage)
    vocab, T = tokenizer.get_vocab(), model.cfg.context_length
    recalled = recall.recall_card(logits_of, vocab, T, max_pairs(T, len(recall.row_words(vocab))))
    words = behaviour.word_ids(vocab)
    next(stage)
    induction = behaviour.behavioural_induction(logits_of, words)
    next(stage)
    probes = held_out_probes(model, tokenizer, n_probes)
    for _ in stage:  # the bar to its end
        pass
    return {
        "val_loss": round(val_loss, 4),
        "val_perplexity": round(math.exp(val_loss), 3),
        "val_tokens": val_tokens,
        **probes,
        "best_induction_head": {
            "layer": int(best[0]),
            "head": int(best[1]),
            "score": heads["induction"][best[0]][best[1]],
        },
        "behavioural_induction": induction,
        "recall": recalled,
        "min_row_sum": round(float(row_sums.min()), 6),
        "min_row_sum_per_head": np.round(row_sums, 6).tolist(),
        "heads": heads,
    }


def model_entry(
    path: Path, n_probes: int = N_PROBES, valid_lines: list[str] | None = None
) -> ModelCard:
    """Model card of one checkpoint: config, size, training record, probes (on
    ``valid_lines`` when given, :func:`evaluate`).

    Raises:
        ValueError: if the checkpoint cannot be loaded.
    """
    model, tokenizer, meta = load_checkpoint(path)
    probes = evaluate(model, tokenizer, n_probes, valid_lines)
    data = str(meta["training"].get("data", ""))
    if data and not data.startswith("built-in corpus"):  # a --corpus model: say on what
        probes["validation_text"] = (
            "the held-out lines of --corpus" if valid_lines else "the built-in corpus's "
            f"held-out lines, not its own text ({data.split(',')[0]}): pass --corpus"
        )  # fmt: skip
        if not valid_lines:
            print(
                f"{path.name} was trained on {data.split(',')[0]}: its perplexity is "
                "measured on the built-in corpus's held-out lines; pass --corpus "
                f"{data.split(',')[0]} to measure it on that text's held-out lines"
            )
    return ModelCard(
        checkpoint=path.name,
        source="safetensors checkpoint",
        config=model.cfg.to_dict(),
        parameters=model.num_parameters(),
        training={k: v for k, v in meta["training"].items() if k != "loss_curve"},
        probes=probes,
    )


def _accuracy(value: float | None) -> str:
    return "skipped" if value is None else f"{value:.3f}"


def card_entries(
    checkpoints: list[Path], n_probes: int = N_PROBES, valid_lines: list[str] | None = None
) -> dict[str, ModelCard]:
    """Evaluate ``checkpoints`` (on ``valid_lines`` when given): their model cards keyed
    by attention kind (a later checkpoint of the same kind wins), for
    :func:`export.card.write_card`.

    Raises:
        ValueError: as :func:`model_entry`.
    """
    models = {}
    for path in checkpoints:
        entry = model_entry(Path(path), n_probes, valid_lines)
        models[entry.config["attention"]] = entry
        pr = entry.probes
        print(
            f"{Path(path).name}: val loss {pr['val_loss']}, agreement "
            f"{_accuracy(pr['agreement_accuracy'])}, IOI {_accuracy(pr['ioi_accuracy'])}, "
            f"pronoun {_accuracy(pr['pronoun_accuracy'])}, best induction "
            f"{pr['best_induction_head']}"
        )
    return models


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="Evaluate checkpoints and write the model card.")
    p.add_argument(
        "checkpoints", nargs="*", type=Path, help=".safetensors checkpoints (default: shipped)"
    )
    p.add_argument("--card", type=Path, default=SHIPPED_DIR / "model_card.json")
    p.add_argument(
        "--add",
        action="store_true",
        help="keep the card's other models' entries exactly as they are; add (or replace) "
        "the evaluated checkpoints' kinds",
    )
    p.add_argument(
        "--corpus",
        type=Path,
        default=None,
        help="the plain-text file the model was trained on (training.train --corpus): its "
        "held-out last 5%% of lines give the perplexity, row sums and head statistics",
    )
    args = p.parse_args(argv)
    checkpoints = args.checkpoints or [shipped_checkpoint(kind) for kind in SHIPPED_KINDS]
    valid_lines, data = None, None
    if args.corpus is not None:
        try:
            _, valid_lines, data = corpus_lines(args.corpus)
        except (OSError, ValueError) as exc:
            raise SystemExit(f"--corpus {args.corpus}: {exc}") from None
    try:
        entries = card_entries(checkpoints, N_PROBES, valid_lines)
    except ValueError as exc:  # e.g. a vocabulary too small for the induction probe
        raise SystemExit(f"training.evaluate: {exc}") from None
    keep = json.loads(args.card.read_text())["models"] if args.add and args.card.exists() else {}
    write_card(entries, args.card, N_PROBES, ROW_SUM_LINES, keep=keep, training_data=data)


if __name__ == "__main__":
    main()
