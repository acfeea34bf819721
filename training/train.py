"""Train a model on the built-in corpus or a plain-text file.

    python -m training.train --attention softmax     # -> exported/softmax.safetensors
    python -m training.train --attention linear --corpus my.txt --out runs/my.safetensors

Seeded and reproducible (same arguments, same machine: same weights). Writes
one ``.safetensors`` file holding the weights, the config, the tokenizer and
what it was trained on, so it is a complete model for ``export.graphs`` and
the app's uploader, and the tokenizer alone as ``tokenizer.json`` beside it.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from tokenizers import Tokenizer
from tqdm import tqdm

from inference import recall
from models.checkpoint import save_checkpoint, shipped_checkpoint
from models.config import ATTENTION_KINDS, ModelConfig
from models.tokenizer import build_tokenizer
from models.transformer import Transformer
from training import recipe
from training.data import batches, corpus_lines, token_stream, write_tokenizer
from training.eps_share import EPS_SHARE_WEIGHT, EpsShare
from training.loss import evaluate_loss
from training.recall_rows import recall_batch
from training.run_files import resume_point, tokenizer_path

RESUME_WARMUP = 50  # steps of linear warm-up after a resume (AdamW's moments restart)


def lr_at(step: int, steps: int, lr: float, warmup: int) -> float:
    """Linear warm-up then cosine decay to lr / 10."""
    if step < warmup:
        return lr * (step + 1) / warmup
    progress = (step - warmup) / max(1, steps - warmup)
    return lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def train(
    cfg: ModelConfig,
    tokenizer: Tokenizer,
    train_lines: list[str],
    valid_lines: list[str],
    steps: int,
    batch_size: int = 64,
    lr: float = 3e-3,
    seed: int = 0,
    progress: bool = True,
    on_checkpoint=None,
    checkpoint_every: int = 0,
    eps_share_weight: float = 0.0,
    recall_share: float = 0.0,
    resume: tuple[dict, int] | None = None,
    on_history=None,
    history_steps: tuple[int, ...] = (),
) -> tuple[Transformer, dict]:
    """Train ``Transformer(cfg)`` with AdamW; returns the model and a training record.

    For linear attention, ``eps_share_weight`` > 0 adds that times
    :meth:`EpsShare.pop_penalty` to the loss, so the normalizer phi(q_i)^T z_i stays
    above eps / EPS_SHARE_FLOOR and every attention row sums to about 1.

    The record holds steps, batch size, tokens seen, wall time (s), the loss
    curve and the final validation loss (nats/token) and perplexity.
    ``on_checkpoint(model, step)`` is called every ``checkpoint_every`` steps (0: never).
    ``recall_share`` (0..1) of each batch's rows are synthetic recall rows
    (``training/recall_rows.py``: associative recall and repeated random words, Zoology's
    recipe) instead of corpus windows.
    ``resume = (state_dict, step)`` continues an interrupted run: the weights of its
    checkpoint at ``step``, the data drawn as the run drew it (the generator is fast-forwarded
    past ``step`` batches) and the same learning-rate schedule; AdamW's moments were not saved,
    so they restart, with a short warm-up (``RESUME_WARMUP`` steps) to ease them in.
    ``on_history(model, step)`` is called with the model after ``step`` updates for each
    step of ``history_steps`` (0: the initialisation; ``steps``: the trained model); it
    draws nothing from the run's generators, so the run is the same with or without it.
    """
    torch.manual_seed(seed)
    random.seed(seed)
    np.random.seed(seed)
    generator = torch.Generator().manual_seed(seed)
    stream, valid = token_stream(tokenizer, train_lines), token_stream(tokenizer, valid_lines)
    validation = "held-out lines"
    if len(valid) < 2:  # a one-word held-out split has no next token to predict
        valid, validation = stream, "training text (the held-out split is too short)"
    model = Transformer(cfg)
    first = 0
    if resume is not None:
        model.load_state_dict(resume[0])
        first = resume[1]
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.05}, {"params": no_decay, "weight_decay": 0.0}],
        lr=lr,
        betas=(0.9, 0.95),
    )
    data = batches(stream, batch_size, cfg.context_length, generator)
    words = torch.tensor(recall.row_words(tokenizer.get_vocab()), dtype=torch.long)  # (W,)
    n_recall = round(batch_size * recall_share)
    penalty = EpsShare(model) if cfg.attention == "linear" and eps_share_weight > 0 else None
    for _ in range(first):  # replay the interrupted run's draws
        next(data)
        if n_recall:
            recall_batch(words, n_recall, cfg.context_length, generator)
    curve, start = [], time.perf_counter()
    bar = tqdm(range(first, steps), desc=f"train {cfg.attention}", disable=not progress)
    for step in bar:
        if on_history and step in history_steps:
            on_history(model, step)
        model.train()
        rewarm = min(1.0, (step - first + 1) / RESUME_WARMUP) if first else 1.0
        for group in opt.param_groups:
            group["lr"] = rewarm * lr_at(step, steps, lr, warmup=max(1, steps // 20))
        x, y = next(data)  # (B, T), (B, T)
        if n_recall:
            rx, ry = recall_batch(words, n_recall, cfg.context_length, generator)  # (R, T)
            x, y = torch.cat([x[n_recall:], rx]), torch.cat([y[n_recall:], ry])  # (B, T)
        logits = model(x)  # (B, T, V)
        loss = F.cross_entropy(logits.flatten(0, 1), y.flatten())
        total = loss if penalty is None else loss + eps_share_weight * penalty.pop_penalty()
        opt.zero_grad(set_to_none=True)
        total.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if checkpoint_every and on_checkpoint and step and step % checkpoint_every == 0:
            on_checkpoint(model, step)
        if step % 50 == 0 or step == steps - 1:
            curve.append((step, round(loss.item(), 4)))
            bar.set_postfix(loss=f"{loss.item():.3f}")
    wall = time.perf_counter() - start
    if on_history and steps in history_steps:
        on_history(model, steps)
    for handle in penalty.handles if penalty else []:
        handle.remove()
    val_loss = evaluate_loss(model, valid, cfg.context_length)
    record = {
        "steps": steps,
        "batch_size": batch_size,
        "lr": lr,
        "seed": seed,
        "schedule": recipe.SCHEDULE,
        "tokens_seen": steps * batch_size * cfg.context_length,
        "train_tokens": len(stream),
        "wall_time_s": round(wall, 1),
        "loss_curve": curve,
        "final_train_loss": curve[-1][1],
        "validation": validation,
        "val_loss": round(val_loss, 4),
        "val_perplexity": round(math.exp(val_loss), 3),
    }
    if penalty is not None:
        record["eps_share_weight"] = eps_share_weight
    record["recall_share"] = recall_share
    if first:
        record["resumed_at_step"] = first
    return model.eval(), record


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="Train a small transformer language model.")
    p.add_argument("--attention", choices=ATTENTION_KINDS, default="softmax")
    p.add_argument("--corpus", type=Path, default=None, help="plain-text file (default: built-in)")
    p.add_argument(
        "--out", type=Path, default=None, help="output .safetensors file (exported/<attention>...)"
    )
    p.add_argument("--steps", type=int, default=recipe.STEPS)
    p.add_argument("--batch-size", type=int, default=recipe.BATCH_SIZE)
    p.add_argument("--lr", type=float, default=recipe.LR)
    p.add_argument("--seed", type=int, default=recipe.SEED)
    p.add_argument("--n-layer", type=int, default=3)
    p.add_argument("--n-head", type=int, default=4)
    p.add_argument("--d-model", type=int, default=128)
    p.add_argument("--d-mlp", type=int, default=256)
    p.add_argument("--context-length", type=int, default=64)
    p.add_argument("--max-words", type=int, default=4000, help="vocabulary cap for --corpus")
    p.add_argument(
        "--tokenizer-out",
        type=Path,
        default=None,
        help="tokenizer JSON (default: tokenizer.json beside --out, or NAME.tokenizer.json "
        "there when tokenizer.json holds another run's vocabulary)",
    )
    p.add_argument("--checkpoint-every", type=int, default=0, help="also save every N steps")
    p.add_argument(
        "--resume",
        type=Path,
        default=None,
        help="continue from a checkpoint written by --checkpoint-every (NAME.stepN.safetensors)",
    )
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="torch CPU threads")
    p.add_argument(
        "--eps-share-weight",
        type=float,
        default=EPS_SHARE_WEIGHT,
        help="linear attention: weight of the penalty on eps's share of the normalizer",
    )
    p.add_argument(
        "--recall-share",
        type=float,
        default=None,
        help="share of each batch's rows that are synthetic recall rows (0..1; default: "
        f"{recipe.RECALL_SHARE} on the built-in corpus, 0 with --corpus)",
    )
    p.add_argument(
        "--history",
        type=Path,
        default=None,
        help="keep the weights (rounded to float16) at each of training.recipe.HISTORY_STEPS "
        "in DIR/<attention>.step<N>.safetensors, for python -m training.history",
    )
    args = p.parse_args(argv)
    args.out = args.out or shipped_checkpoint(args.attention)
    if args.recall_share is None:
        args.recall_share = 0.0 if args.corpus else recipe.RECALL_SHARE
    torch.set_num_threads(max(1, args.threads))

    train_lines, valid_lines, description = corpus_lines(args.corpus)
    tokenizer = build_tokenizer(train_lines, max_words=args.max_words if args.corpus else None)
    args.tokenizer_out = args.tokenizer_out or tokenizer_path(args.out, tokenizer)
    cfg = ModelConfig(
        vocab_size=tokenizer.get_vocab_size(),
        n_layer=args.n_layer,
        n_head=args.n_head,
        d_model=args.d_model,
        d_mlp=args.d_mlp,
        context_length=args.context_length,
        attention=args.attention,
        scale_embedding=True,
    )

    def on_checkpoint(model, step):
        save_checkpoint(args.out.with_suffix(f".step{step}.safetensors"), model, tokenizer)

    def on_history(model, step):
        rounded = Transformer(model.cfg)
        rounded.load_state_dict({k: v.half().float() for k, v in model.state_dict().items()})
        path = args.history / f"{args.attention}.step{step}.safetensors"
        save_checkpoint(path, rounded, tokenizer, {"step": step})

    model, record = train(
        cfg,
        tokenizer,
        train_lines,
        valid_lines,
        args.steps,
        args.batch_size,
        args.lr,
        args.seed,
        on_checkpoint=on_checkpoint,
        checkpoint_every=args.checkpoint_every,
        eps_share_weight=args.eps_share_weight,
        recall_share=args.recall_share,
        resume=resume_point(args.resume),
        on_history=on_history if args.history else None,
        history_steps=recipe.HISTORY_STEPS if args.history else (),
    )
    record["data"] = description + (
        f" + {args.recall_share:.0%} synthetic recall rows" if args.recall_share else ""
    )
    record["torch"] = torch.__version__
    record["cpu_threads"] = torch.get_num_threads()
    save_checkpoint(args.out, model, tokenizer, record)
    write_tokenizer(args.tokenizer_out, tokenizer)
    print(
        f"wrote {args.out}: {model.num_parameters():,} parameters, val loss {record['val_loss']}"
        f" (perplexity {record['val_perplexity']}), {record['wall_time_s']} s; {args.tokenizer_out}"
    )


if __name__ == "__main__":
    main()
