"""#46: the three shipped models are trained with one recipe (training/recipe.py): their
cards' training records agree on every key of the recipe, and say the recipe's values."""

from __future__ import annotations

import json

import pytest

from models.config import SHIPPED_KINDS
from tests.helpers import EXPORTED
from training import recipe


@pytest.fixture(scope="module")
def records() -> dict[str, dict]:
    card = json.loads((EXPORTED / "model_card.json").read_text())
    return {kind: card["models"][kind]["training"] for kind in SHIPPED_KINDS}


def test_the_three_cards_record_one_recipe(records):
    for key in recipe.RECIPE_KEYS:
        values = {kind: r.get(key) for kind, r in records.items()}
        assert len(set(map(json.dumps, values.values()))) == 1, (key, values)
        assert values[SHIPPED_KINDS[0]] is not None, key


def test_the_recipe_recorded_is_training_recipes(records):
    r = records[SHIPPED_KINDS[0]]
    assert (r["steps"], r["batch_size"], r["lr"], r["seed"], r["recall_share"]) == (
        recipe.STEPS, recipe.BATCH_SIZE, recipe.LR, recipe.SEED, recipe.RECALL_SHARE
    )  # fmt: skip
    assert r["schedule"] == recipe.SCHEDULE
    assert r["data"].endswith(f"+ {recipe.RECALL_SHARE:.0%} synthetic recall rows")
    assert "resumed_at_step" not in r  # one uninterrupted run each


def test_the_history_was_trained_with_the_same_recipe():
    history = json.loads((EXPORTED / "history" / "training_history.json").read_text())
    assert history["recipe"]["steps"] == recipe.STEPS
    assert history["recipe"]["recall_share"] == recipe.RECALL_SHARE
    assert set(history["models"]) == set(SHIPPED_KINDS)
    for h in history["models"].values():
        assert h["steps"] == list(recipe.HISTORY_STEPS)


def test_the_readme_sets_the_corpus_alone_variants_beside_the_shipped_ones(records):
    """#46: the same recipe on the corpus alone (``make models-corpus-only``, its card in
    docs/) differs from the shipped one in the rows alone, and the README's table is that
    card's numbers beside the shipped card's."""
    from tests.helpers import ROOT

    alone = json.loads((ROOT / "docs" / "corpus_only_card.json").read_text())["models"]
    shipped = json.loads((EXPORTED / "model_card.json").read_text())["models"]
    for kind in SHIPPED_KINDS:
        r = alone[kind]["training"]
        assert not r.get("recall_share") and "recall rows" not in r["data"], kind
        for key in ("steps", "batch_size", "lr", "seed"):
            assert r[key] == records[kind][key], (kind, key)
    readme = (ROOT / "README.md").read_text()

    def row(label, f):
        cells = " | ".join(
            f"{f(shipped[k]['probes'])} | {f(alone[k]['probes'])}" for k in SHIPPED_KINDS
        )
        return f"| {label} | {cells} |"

    assert row("validation perplexity", lambda p: f"{p['val_perplexity']:.1f}") in readme
    top = lambda p: f"{round(100 * p['recall']['top_token']['16'])}%"  # noqa: E731
    assert row("recall n = 16, top token", top) in readme
    held = lambda p: f"{round(100 * p['recall']['held_out_top_token']['16'])}%"  # noqa: E731
    assert row("recall n = 16, top token, held-out words", held) in readme
