"""The training history of the shipped models: what each checkpoint of a run could do.

    python -m training.history     # runs/history/*.stepN.safetensors -> exported/history/

``python -m training.train --history DIR`` keeps each model's weights (rounded to float16)
at every step of ``training.recipe.HISTORY_STEPS``. For each kept checkpoint this measures,
in torch on those same weights:

* ``val_loss``: mean next-token loss (nats/token) on the first 64 windows of the held-out
  lines (``training.loss.evaluate_loss``);
* ``icl_score``: the in-context learning score, the loss on the first copy of a block of
  random words minus the loss on its second copy (nats; Olsson et al. 2022, "In-context
  Learning and Induction Heads", arXiv 2209.11895, measure early against late tokens;
  ``inference.behaviour.behavioural_induction``);
* ``prefix_matching``: every head's prefix-matching (induction) score (L, H), the attention
  from a repeated token to the token after its first occurrence
  (``inference.head_stats.induction_probe``, the model card's setting);
* ``recall_n8``: top-token associative recall at n = 8 pairs, the trained format
  (``inference.recall``).

The **phase change** of a model is the first kept step whose best prefix-matching score is
at least :data:`PHASE_THRESHOLD`. The attention graphs of :func:`graph_steps` (the app's
step slider) are written by ``export/history.py`` as float16 ONNX graphs; the app reads
them and ``exported/history/training_history.json`` and nothing of torch.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import numpy as np
import torch
from tokenizers import Tokenizer
from tqdm import tqdm

from export.history import write_history_graphs
from inference import behaviour, head_stats, recall
from models.checkpoint import SHIPPED_DIR, load_checkpoint
from models.config import SHIPPED_KINDS
from training import recipe
from training.data import corpus_lines, token_stream
from training.loss import evaluate_loss

PHASE_THRESHOLD = 0.4  # best prefix-matching score that marks an induction head
RECALL_N = 8  # pairs of the history's recall column
GRAPH_COUNT = 8  # checkpoints per model the app can redraw (float16, ~1.4 MB each)
HISTORY_FILE = "training_history.json"
STEP_NAME = re.compile(r"^(?P<kind>[a-z]+)\.step(?P<step>[0-9]+)\.safetensors$")


@torch.no_grad()
def checkpoint_metrics(model, tokenizer, valid: torch.Tensor) -> dict:
    """The history's measures of one checkpoint (see the module docstring).

    Args:
        model: a ``models.transformer.Transformer`` in eval mode.
        tokenizer: its tokenizer.
        valid: the held-out token stream (N,).

    Returns:
        ``{"val_loss", "icl_score", "first_copy_loss", "second_copy_loss",
        "prefix_matching" (L x H lists), "recall_n8"}``.
    """
    T, vocab = model.cfg.context_length, tokenizer.get_vocab()

    def logits_of(ids: list[int]) -> np.ndarray:
        return model(torch.tensor([ids]))[0].numpy()  # (T, V)

    def attn_of(ids: list[int]) -> np.ndarray:
        return model(torch.tensor([ids]), inspect=True)[1]["attn"].numpy()  # (L, H, T, T)

    special = {a.content for a in tokenizer.get_added_tokens_decoder().values() if a.special}
    probe_words = head_stats.probe_word_ids(vocab, model.cfg.vocab_size, special)
    prefix = head_stats.induction_probe(attn_of, probe_words, T)  # (L, H)
    copying = behaviour.behavioural_induction(logits_of, behaviour.word_ids(vocab))
    recalled = recall.recall_scores(
        logits_of, recall.row_words(vocab), RECALL_N, recall.RECALL_SEQUENCES
    )
    return {
        "val_loss": round(evaluate_loss(model, valid, T), 4),
        "icl_score": copying["score"],
        "first_copy_loss": copying["first_copy_loss"],
        "second_copy_loss": copying["second_copy_loss"],
        "prefix_matching": np.round(prefix, 4).tolist(),
        "recall_n8": recalled["top_token"],
    }


def phase_change(steps: list[int], best: list[float], threshold: float = PHASE_THRESHOLD):
    """The first step whose best prefix-matching score is >= ``threshold``, or None."""
    return next((s for s, b in zip(steps, best, strict=True) if b >= threshold), None)


def graph_steps(steps: list[int], phases: list[int | None], count: int = GRAPH_COUNT) -> list[int]:
    """``count`` of the kept ``steps`` (sorted, themselves log-spaced) for the app's slider,
    the same for every model: the first and the last, each model's phase change and the
    kept step before it, the rest spread evenly over the kept ones (more than ``count``
    only when the phase changes alone need more)."""
    chosen = {steps[0], steps[-1]}
    for phase in (p for p in phases if p is not None):
        i = steps.index(phase)
        chosen |= {steps[max(0, i - 1)], phase}
    spread = [steps[j] for j in np.linspace(0, len(steps) - 1, count).round().astype(int)]
    while len(chosen) < min(count, len(steps)):
        free = [s for s in spread if s not in chosen]
        chosen.add(free[0] if free else next(s for s in steps if s not in chosen))
    return sorted(chosen)


def kept_checkpoints(folder: Path) -> dict[str, dict[int, Path]]:
    """kind -> step -> path of the ``--history`` checkpoints in ``folder``."""
    found: dict[str, dict[int, Path]] = {}
    for path in sorted(folder.glob("*.step*.safetensors")):
        if m := STEP_NAME.match(path.name):
            found.setdefault(m["kind"], {})[int(m["step"])] = path
    return found


def model_history(paths: dict[int, Path], valid_lines: list[str]) -> tuple[dict, dict, Tokenizer]:
    """One model's history (the measures at every kept step, its phase change), its
    checkpoints (step -> model) and their tokenizer."""
    steps = sorted(paths)
    rows, models, valid = [], {}, None
    for step in tqdm(steps, desc=paths[steps[0]].name.split(".")[0], unit="checkpoint"):
        model, tokenizer, _ = load_checkpoint(paths[step])
        models[step] = model
        valid = token_stream(tokenizer, valid_lines) if valid is None else valid  # one run's
        rows.append(checkpoint_metrics(model, tokenizer, valid))
    best = [float(np.max(r["prefix_matching"])) for r in rows]
    history = {"steps": steps, "best_prefix_matching": [round(b, 4) for b in best]}
    for key in rows[0]:
        history[key] = [r[key] for r in rows]
    history["phase_change_step"] = phase_change(steps, best)
    return history, models, tokenizer


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="Measure and ship the training history.")
    p.add_argument("--history", type=Path, default=Path("runs/history"))
    p.add_argument("--out", type=Path, default=SHIPPED_DIR / "history")
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    found = kept_checkpoints(args.history)
    kinds = [k for k in SHIPPED_KINDS if k in found]
    if not kinds:
        raise SystemExit(f"{args.history}: no NAME.stepN.safetensors; train with --history")
    _, valid_lines, _ = corpus_lines(None)
    args.out.mkdir(parents=True, exist_ok=True)
    for old in args.out.glob("*.onnx"):
        old.unlink()
    measured = {k: model_history(found[k], valid_lines) for k in kinds}
    steps = sorted(set.intersection(*(set(h["steps"]) for h, *_ in measured.values())))
    shown = graph_steps(steps, [h["phase_change_step"] for h, *_ in measured.values()])
    for history, models, tokenizer in measured.values():
        history["graph_steps"] = shown
        write_history_graphs({s: models[s] for s in shown}, args.out, tokenizer)
    out = {
        "recipe": {k: getattr(recipe, k.upper()) for k in ("steps", "batch_size", "lr", "seed")}
        | {"recall_share": recipe.RECALL_SHARE, "schedule": recipe.SCHEDULE},
        "phase_threshold": PHASE_THRESHOLD,
        "recall_n": RECALL_N,
        "models": {kind: history for kind, (history, *_) in measured.items()},
    }
    (args.out / HISTORY_FILE).write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.out / HISTORY_FILE}")


if __name__ == "__main__":
    main()
