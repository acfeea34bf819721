"""Train the translation models of the encoder-decoder lesson (issue #10).

    python -m training.seq2seq --kind gru           # -> exported/seq2seq_gru.safetensors
    python -m training.seq2seq --kind bahdanau
    python -m training.seq2seq --kind transformer

English -> Tokan pairs from ``corpus.translation.splits()`` (sources of at most 16
words), teacher forcing, cross-entropy on the target words, Adam with warmup and cosine
decay. Seeded and reproducible. Writes one ``.safetensors`` file: the weights, the
config and both vocabularies in its metadata.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from tqdm import tqdm

from corpus import translation
from models.checkpoint import SHIPPED_DIR, save_safetensors
from models.seq2seq import build_seq2seq
from models.seq2seq.config import SEQ2SEQ_KINDS, Seq2SeqConfig
from models.seq2seq.vocab import BOS_ID, PAD_ID, encode_words, word_vocab

FORMAT = "attention-visualizer-seq2seq/1"
# Sizes per kind: small enough to train in minutes on a 2-core CPU and to ship.
SIZES = {
    "gru": {"d_model": 128, "n_layer": 1},
    "bahdanau": {"d_model": 128, "n_layer": 1},
    "transformer": {"d_model": 64, "n_layer": 3, "n_head": 4, "d_mlp": 256},
}


def vocabularies():
    """(source, target) word tokenizers over every word the toy grammar can make."""
    lex = translation.dictionary()
    target = list(lex.values()) + [translation.SUBJECT_PARTICLE, translation.OBJECT_PARTICLE]
    return word_vocab([list(lex)]), word_vocab([target])


def pad(rows: list[list[int]]) -> torch.Tensor:
    """Rows of ids -> (B, max length) int64, padded with ``<pad>`` (id 0) at the end."""
    width = max(map(len, rows))
    return torch.tensor([r + [PAD_ID] * (width - len(r)) for r in rows], dtype=torch.long)


def batch_tensors(pairs, src_tok, tgt_tok):
    """Pairs -> src (B, S), src_len (B,), tgt_in (B, T) = <bos> + target, tgt_out (B, T) =
    target + <eos> (padding 0 is ignored by the loss)."""
    src = [encode_words(src_tok, list(p.source)) for p in pairs]
    tgt = [encode_words(tgt_tok, list(p.target)) for p in pairs]
    tgt_in = [[BOS_ID] + t[:-1] for t in tgt]
    lengths = torch.tensor([len(s) for s in src], dtype=torch.long)
    return pad(src), lengths, pad(tgt_in), pad(tgt)


def train(kind: str, steps: int, batch_size: int = 64, lr: float = 2e-3, seed: int = 0):
    """Train one model; returns ``(model, config, (src_tok, tgt_tok), record)``."""
    torch.manual_seed(seed)
    src_tok, tgt_tok = vocabularies()
    cfg = Seq2SeqConfig(kind, src_tok.get_vocab_size(), tgt_tok.get_vocab_size(), **SIZES[kind])
    model = build_seq2seq(cfg)
    data = translation.splits().train
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    rng, warmup, losses, start = random.Random(seed), max(1, steps // 20), [], time.time()
    model.train()
    for step in tqdm(range(steps), desc=f"training {kind}", mininterval=5):
        scale = min(1.0, (step + 1) / warmup) * 0.5 * (1 + math.cos(math.pi * step / steps))
        for group in opt.param_groups:
            group["lr"] = lr * max(scale, 0.02)
        src, src_len, tgt_in, tgt_out = batch_tensors(
            rng.sample(data, batch_size), src_tok, tgt_tok
        )
        logits = model(src, tgt_in, src_len)  # (B, T, V)
        loss = F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
    record = {
        "steps": steps,
        "batch_size": batch_size,
        "lr": lr,
        "seed": seed,
        "wall_time_s": round(time.time() - start, 1),
        "final_loss": round(sum(losses[-50:]) / len(losses[-50:]), 4),
        "data": f"corpus.translation.splits(): {len(data):,} pairs, sources of at most {translation.TRAIN_MAX_WORDS} words",
    }
    return model.eval(), cfg, (src_tok, tgt_tok), record


def checkpoint_path(kind: str) -> Path:
    """``exported/seq2seq_<kind>.safetensors``."""
    return SHIPPED_DIR / f"seq2seq_{kind}.safetensors"


def save(path: Path, model, cfg: Seq2SeqConfig, vocabs, record: dict) -> None:
    """Weights (float32), config, both vocabularies and the training record in one file."""
    state = {k: v.detach().contiguous().float() for k, v in model.state_dict().items()}
    metadata = {
        "format": FORMAT,
        "config": cfg.to_json(),
        "src_tokenizer": vocabs[0].to_str(),
        "tgt_tokenizer": vocabs[1].to_str(),
        "training": json.dumps(record, sort_keys=True),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    save_safetensors(state, Path(path), metadata)


def main(argv: list[str] | None = None) -> None:
    """CLI entry: train one kind and write its checkpoint."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=SEQ2SEQ_KINDS, required=True)
    parser.add_argument("--steps", type=int, default=6000)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    model, cfg, vocabs, record = train(args.kind, args.steps)
    out = args.out or checkpoint_path(args.kind)
    save(out, model, cfg, vocabs, record)
    print(f"wrote {out}: final loss {record['final_loss']}, {record['wall_time_s']} s")


if __name__ == "__main__":
    main()
