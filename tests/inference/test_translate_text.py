"""#20 item 13: one path from typed text to a translation (``translate_text``), used by
the app, the model card's evaluation and the bench; held-out sentences the encoder reads
whole."""

from __future__ import annotations

import random

from corpus import translation as tr
from inference.seq2seq import decode, load_translator, read_source, translate_text
from models.seq2seq.config import SEQ2SEQ_KINDS
from training.evaluate_seq2seq import translation_scores


def _longest_sentence() -> list[str]:
    """A sentence of the grammar with 25 words (two past the encoder's 23)."""
    rng = random.Random(0)
    while True:
        words = tr.sample_source(rng, (2, 2, 2), 3)
        if len(words) == 25:
            return words


def test_translate_text_reads_and_cuts_as_the_app_does(exported_dir):
    model = load_translator(exported_dir, "gru")
    words = _longest_sentence()
    room = model.config.max_src - 1
    out = translate_text(model, "  " + " ".join(words).upper())
    assert out.source.words == words[:room]
    assert any(f"only the first {room} are translated" in n for n in out.source.notices)
    assert out.decoding.source == words[:room] + ["<eos>"]  # what the encoder read
    assert out.decoding.words == decode(model, words[:room]).words


def test_the_card_scores_the_translation_the_app_shows(exported_dir):
    """The card's exact match is measured on translate_text's output: a 25-word source
    is cut to 23 words as the app cuts it, so it cannot match the 25-word gold."""
    model = load_translator(exported_dir, "bahdanau")
    pair = tr.translate(_longest_sentence())
    shown = translate_text(model, " ".join(pair.source)).decoding.words
    scores = translation_scores(model, [pair])
    assert scores["exact_match"] == float(shown == list(pair.target)) == 0.0


def test_longer_held_out_sentences_fit_the_encoder(exported_dir):
    """Every ``longer`` sentence is read whole: at most max_src - 1 words, no notice."""
    for kind in SEQ2SEQ_KINDS:
        assert tr.LONGEST_WORDS <= load_translator(exported_dir, kind).config.max_src - 1
    model = load_translator(exported_dir, "transformer")
    longer = tr.splits(n_train=3000, n_heldout=500).longer
    assert max(len(p.source) for p in longer) == tr.LONGEST_WORDS
    for pair in longer:
        source = read_source(model, " ".join(pair.source))
        assert source.words == list(pair.source) and not source.notices
