"""The translation model card holds what the evaluation measures on the shipped graphs."""

from __future__ import annotations

import json

import pytest

from tests.helpers import EXPORTED
from training.evaluate_seq2seq import CARD, evaluate


@pytest.mark.drift
@pytest.mark.xdist_group("seq2seq_card")
def test_the_card_is_what_the_evaluation_measures():
    card = json.loads(CARD.read_text())
    measured = evaluate(EXPORTED, n=500)
    for kind, entry in card["models"].items():
        now = measured["models"][kind]
        for part in ("heldout", "longer", "alignment", "parameters", "config"):
            assert json.loads(json.dumps(now[part])) == entry[part], (kind, part)
    assert measured["train_max_words"] == card["train_max_words"]
    bahdanau, gru = card["models"]["bahdanau"], card["models"]["gru"]
    assert bahdanau["heldout"]["exact_match"] > gru["heldout"]["exact_match"]  # the bottleneck
