"""Evaluation and the model card: the README's train, export, evaluate commands in turn."""

import json

import pytest

from corpus.corpus import generate_corpus, lexicon
from export.card import write_card
from export.graphs import main as export_main
from models.card import ModelCard
from models.checkpoint import load_checkpoint
from training.evaluate import main as evaluate_main
from training.train import main as train_main


@pytest.mark.slow
def test_train_export_evaluate_clis_write_graphs_and_model_card(tmp_path, capsys):
    """`training.train`, `export.graphs CKPT --out DIR`, then `training.evaluate CKPT --card
    CARD` on a tiny softmax model whose vocabulary covers the lexicon (so every probe answer
    is one token): the graphs are written, and the card holds the checkpoint's config and
    500 probes' results."""
    corpus = tmp_path / "corpus.txt"
    # the lexicon line first: a user corpus's last 5% of lines are its validation split
    corpus.write_text("\n".join([" ".join(lexicon()), *generate_corpus(200, seed=5)]))
    ckpt = tmp_path / "tiny.safetensors"
    sizes = "--n-layer 1 --n-head 2 --d-model 16 --d-mlp 32 --context-length 16"
    train_main(f"--corpus {corpus} --out {ckpt} --steps 2 --batch-size 4 {sizes}".split())
    out, card_path = tmp_path / "graphs", tmp_path / "card" / "model_card.json"
    export_main([str(ckpt), "--out", str(out)])
    assert "export tiny.safetensors" in capsys.readouterr().err  # #44 item 24: progress
    evaluate_main([str(ckpt), "--card", str(card_path)])
    assert sorted(p.name for p in out.iterdir()) == [
        "tiny.fast.onnx",
        "tiny.inspect.onnx",
        "tiny.lab.onnx",
    ]
    card = json.loads(card_path.read_text())
    entry = card["models"]["softmax"]
    model, _, _ = load_checkpoint(ckpt)
    assert entry["config"] == model.cfg.to_dict() and entry["checkpoint"] == ckpt.name
    assert entry["training"]["steps"] == 2
    for key in ("agreement_accuracy", "ioi_accuracy", "pronoun_accuracy"):
        assert 0.0 <= entry["probes"][key] <= 1.0
    # #44 item 20: evaluated without --corpus, the card and the output say on what text
    assert "not its own text (corpus.txt): pass --corpus" in entry["probes"]["validation_text"]
    assert "pass --corpus corpus.txt" in capsys.readouterr().out
    assert "held-out" in card["probes"]
    induction = entry["probes"]["behavioural_induction"]  # issue #22: from the logits alone
    drop = induction["first_copy_loss"] - induction["second_copy_loss"]
    assert abs(induction["score"] - drop) <= 2e-4  # each of the three rounded to 4 places
    recalled = entry["probes"]["recall"]  # #46: both rules, both formats
    for rule in ("top_token", "ranking", "held_out_top_token", "held_out_ranking"):
        assert list(recalled[rule]) == (["2", "4"] if "held" in rule else ["1", "2", "4"])
        assert all(0.0 <= a <= 1.0 for a in recalled[rule].values())  # 2 n + 1 <= 16 tokens
    assert recalled["rows_max_pairs"] == 1 and recalled["sequences"] == 64  # T // 2 - 8 = 0
    assert "top token over the whole vocabulary" in card["recall"]
    assert "on the corpus text alone" in card["recall"]  # trained without --recall-share

    # --add keeps the card's other entries byte for byte; the evaluated kind is replaced
    other = {**entry, "parameters": -1}  # an entry no evaluation would write
    card["models"] = {"linear": other, "softmax": {"stale": True}}
    card_path.write_text(json.dumps(card, indent=2) + "\n")
    keep = json.loads(card_path.read_text())["models"]  # what main reads with --add
    write_card({"softmax": ModelCard.from_dict(entry)}, card_path, 500, 8, keep=keep)
    added = json.loads(card_path.read_text())["models"]
    assert list(added) == ["softmax", "linear"]  # ATTENTION_KINDS order
    assert json.dumps(added["linear"]) == json.dumps(other)
    assert added["softmax"] == entry


@pytest.mark.slow
def test_evaluate_a_corpus_model_skips_the_probes_its_vocabulary_lacks(tmp_path, capsys):
    """#44 item 20: a model trained with --corpus on text without the probes' words is
    evaluated (it raised "probe answer 'see'/'sees' is not a single token"): the probes
    whose words it lacks are skipped and named, perplexity is on its own held-out lines,
    and the card is written."""
    corpus = tmp_path / "poems.txt"
    words = ("river stone light rain moon wind field snow bird tree hill sea cloud leaf "
             "star night dawn road bell fire sand glass door wall lamp rope ship sail").split()  # fmt: skip
    lines = [f"the {a} and the {b} of {c}" for a in words for b in words for c in words[:2]]
    corpus.write_text("\n".join(lines) + "\n")
    ckpt, card_path = tmp_path / "poems.safetensors", tmp_path / "card.json"
    sizes = "--n-layer 1 --n-head 2 --d-model 16 --d-mlp 32 --context-length 16"
    train_main(f"--corpus {corpus} --out {ckpt} --steps 2 --batch-size 4 {sizes}".split())
    first = (tmp_path / "tokenizer.json").read_text()
    evaluate_main([str(ckpt), "--corpus", str(corpus), "--card", str(card_path)])
    captured = capsys.readouterr()
    printed = captured.out
    assert "evaluate softmax" in captured.err and "probes" in captured.err  # item 24: progress
    assert "skipped 500 of 500 agreement probes: the vocabulary lacks" in printed, printed
    card = json.loads(card_path.read_text())
    probes = card["models"]["softmax"]["probes"]
    assert probes["agreement_accuracy"] is None and probes["ioi_accuracy"] is None
    skipped = probes["probes_skipped"]["agreement"]
    assert skipped["skipped"] == 500 and skipped["used"] == 0 and skipped["missing_words"]
    assert probes["val_perplexity"] > 1 and "poems.txt" in card["training_data"]
    assert probes["validation_text"] == "the held-out lines of --corpus"
    assert set(probes["recall"]["top_token"]) == {"1", "2", "4"}  # from its own vocabulary
    assert probes["recall"]["held_out_top_token"] == {}  # no contraction: a, i (< 2 n words)
    assert probes["recall"]["held_out_words"] < 4
    assert probes["best_induction_head"]["layer"] == 0
    # item 24: a second run on other text into the same folder keeps the first's tokenizer
    other = tmp_path / "other.txt"
    other.write_text("\n".join(f"{w} {v} {w}" for w in words[::-1] for v in words) + "\n")
    second = tmp_path / "other.safetensors"
    train_main(f"--corpus {other} --out {second} --steps 1 --batch-size 2 {sizes}".split())
    assert (tmp_path / "tokenizer.json").read_text() == first
    own = tmp_path / "other.tokenizer.json"
    assert own.read_text() != first
    assert "holds another run's vocabulary" in capsys.readouterr().out
