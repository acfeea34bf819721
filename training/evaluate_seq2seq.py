"""Measure the exported translation models on held-out data; write their model card.

    python -m training.evaluate_seq2seq      # -> exported/seq2seq_card.json

Every figure is measured on the ONNX graphs the app runs, through the app's own path from
text to translation (``inference.seq2seq.translate_text``: the same reading, the same cut),
on ``corpus.translation.splits()``'s held-out sets: ``heldout`` (training lengths,
sentences never trained on) and ``longer`` (longer than any training sentence).

* exact match and BLEU (d2l's formula, ``inference.translation_metrics.bleu``) of
  greedy free-running translations;
* exact match by source length, over both sets (the accuracy-against-length plot);
* alignment: the mean attention weight on the gold source word under teacher forcing,
  for Bahdanau's attention and for every cross-attention head of the transformer
  (best head named), on ``heldout``.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
from safetensors import safe_open

from corpus import translation
from inference.seq2seq import load_translator, translate_text
from inference.translation_metrics import bleu, gold_weights
from models.checkpoint import SHIPPED_DIR
from models.seq2seq.config import SEQ2SEQ_KINDS

CARD = SHIPPED_DIR / "seq2seq_card.json"


def translation_scores(model, pairs) -> dict:
    """Exact match, mean BLEU and exact match by source length of greedy translations."""
    by_length = defaultdict(list)
    exact, scores = [], []
    for pair in pairs:
        words = translate_text(model, " ".join(pair.source)).decoding.words
        ok = words == list(pair.target)
        exact.append(ok)
        scores.append(bleu(words, list(pair.target)))
        by_length[len(pair.source)].append(ok)
    return {
        "exact_match": float(np.mean(exact)),
        "bleu": float(np.mean(scores)),
        "n": len(pairs),
        "by_length": {n: float(np.mean(v)) for n, v in sorted(by_length.items())},
    }


def alignment_scores(model, pairs) -> dict | None:
    """Mean attention on the gold source word under teacher forcing, over every target
    word and by the word's role (``corpus.translation.target_roles``): one figure for
    Bahdanau's attention, and for the transformer every (layer, head) with the best head's
    figures; None for ``gru`` (no attention)."""
    kind = model.config.kind
    if kind == "gru":
        return None
    weights, roles = [], []  # per target word: (…) weights on gold, its role
    for pair in pairs:
        text, gold = " ".join(pair.source), list(pair.target)
        attn = translate_text(model, text, gold=gold, teacher=True).decoding.attention()
        if kind == "transformer":  # (L, H, T, S) -> (T', L, H) on the gold words
            n = len(pair.alignment)
            weights += list(attn[:, :, np.arange(n), list(pair.alignment)].transpose(2, 0, 1))
        else:
            weights += list(gold_weights(attn, list(pair.alignment)))
        roles += translation.target_roles(pair)
    weights = np.asarray(weights)  # (N,) or (N, L, H)
    out: dict = {}
    if kind == "transformer":
        heads = weights.mean(0)  # (L, H)
        layer, head = np.unravel_index(int(np.argmax(heads)), heads.shape)
        out["best_head"] = {"layer": int(layer), "head": int(head)}
        out["per_head"] = np.round(heads.astype(float), 4).tolist()
        weights = weights[:, layer, head]
    out["gold_share"] = float(weights.mean())
    out["by_role"] = {
        role: round(float(weights[np.asarray(roles) == role].mean()), 4)
        for role in sorted(set(roles))
    }
    return out


def evaluate(folder: Path, n: int = 500) -> dict:
    """The card: per kind, training record, parameters and every measured figure."""
    data = translation.splits(n_heldout=n)
    card = {"task": "English -> Tokan (corpus/translation.py, docs/toy_language.md)",
            "train_max_words": translation.TRAIN_MAX_WORDS, "models": {}}  # fmt: skip
    for kind in SEQ2SEQ_KINDS:
        model = load_translator(folder, kind)
        with safe_open(str(folder / f"seq2seq_{kind}.safetensors"), "np") as f:
            training = json.loads(f.metadata().get("training", "{}"))
            parameters = sum(int(np.prod(f.get_slice(k).get_shape())) for k in f.keys())
        card["models"][kind] = {
            "config": json.loads(model.config.to_json()),
            "parameters": parameters,
            "training": training,
            "heldout": translation_scores(model, data.heldout),
            "longer": translation_scores(model, data.longer),
            "alignment": alignment_scores(model, data.heldout),
        }
    return card


def main(argv: list[str] | None = None) -> None:
    """CLI entry: evaluate the exported models and write the card."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=Path, default=SHIPPED_DIR)
    parser.add_argument("--card", type=Path, default=CARD)
    parser.add_argument("--n", type=int, default=500, help="sentences per held-out set")
    args = parser.parse_args(argv)
    card = evaluate(args.models, args.n)
    args.card.write_text(json.dumps(card, indent=1, sort_keys=True) + "\n")
    for kind, entry in card["models"].items():
        held, longer = entry["heldout"], entry["longer"]
        print(f"{kind}: exact {held['exact_match']:.1%} (longer {longer['exact_match']:.1%}), "
              f"BLEU {held['bleu']:.3f}, alignment {entry['alignment']}")  # fmt: skip


if __name__ == "__main__":
    main()
