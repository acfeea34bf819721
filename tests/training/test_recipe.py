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
