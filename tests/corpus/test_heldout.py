"""Probe sets are held out from the training text, and the matcher that ensures it works."""

import pytest

from corpus import heldout
from corpus.corpus import generate_corpus, pronoun_probes
from corpus.heldout import PROBE_MAKERS, held_out, occurring, probe_set, training_lines
from training.data import corpus_lines

KINDS = tuple(PROBE_MAKERS)


def brute_force(texts, lines):
    """Whole-word substring search over the joined lines, independent of ``occurring``."""
    joined = " " + " \n ".join(lines) + " "
    return {t for t in texts if f" {t} " in joined}


def test_occurring_matches_whole_words_within_one_line():
    lines = ["yes , Mary lost her keys because she was late .", "Tom ran because he", "was late"]
    texts = [
        "Mary lost her keys because she",  # mid-line
        "yes , Mary",  # line start
        "late .",  # line end
        "Mary lost her keys because sh",  # a partial word
        "because he was late",  # would need to cross two lines
        "ary lost",  # a partial first word
    ]
    assert occurring(texts, lines) == {"Mary lost her keys because she", "yes , Mary", "late ."}
    with pytest.raises(ValueError):
        occurring(["one"], lines)


def test_occurring_agrees_with_brute_force_on_real_text():
    """On the first 5,000 training lines, raw pronoun probes do recur (so the check can
    fail) and ``occurring`` finds exactly what a plain substring search finds."""
    lines = generate_corpus(5_000, seed=heldout.TRAIN_SEED)
    texts = [f"{p} {a}" for p, a, _ in pronoun_probes(500)]
    expected = brute_force(texts, lines)
    assert len(expected) >= 20
    assert occurring(texts, lines) == expected


def test_training_lines_are_what_train_uses():
    train, valid, description = corpus_lines(None)
    assert train == training_lines() and len(train) == heldout.TRAIN_LINES
    assert train[:100] == generate_corpus(100, seed=heldout.TRAIN_SEED)
    assert "200000 lines, seed 0" in description


@pytest.mark.parametrize("kind", KINDS)
def test_probe_sets_never_occur_in_the_training_text(kind):
    """All 500 probes of each kind against all 200,000 training lines: no prefix followed
    by its answer occurs anywhere, probes are distinct, and the same on every call.

    The full-corpus check uses ``occurring`` (one pass, ~1 s); a plain substring search
    over the full text takes ~20 s for the three kinds, so the independent brute-force
    check runs on the first 20,000 lines, and ``occurring`` itself is checked against
    brute force above."""
    probes = probe_set(kind)
    assert len(probes) == heldout.N_PROBES == len(set(probes))
    texts = [f"{p} {a}" for p, a, _ in probes]
    assert occurring(texts, training_lines()) == set()
    assert brute_force(texts, training_lines()[:20_000]) == set()
    assert probe_set(kind) == probes
    raw = set(PROBE_MAKERS[kind](4 * heldout.N_PROBES))
    assert set(probes) <= raw  # the generator's probes, only filtered


def test_raw_pronoun_probes_did_overlap():
    """The problem the filter fixes: unfiltered, a large share of pronoun probes are
    training text word for word."""
    texts = [f"{p} {a}" for p, a, _ in pronoun_probes(500)]
    assert len(occurring(texts, training_lines())) >= 100


def test_held_out_against_given_lines_and_bad_n():
    lines = [f"{p} {a} ." for p, a, _ in pronoun_probes(10)]
    kept = held_out(pronoun_probes, 10, lines)
    assert len(kept) == 10 and not set(kept) & set(pronoun_probes(10))
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError):
            held_out(pronoun_probes, bad, lines)
    with pytest.raises(ValueError):
        probe_set("sentiment")


def test_held_out_gives_up_when_everything_was_seen():
    every = [f"{p} {a}" for p, a, _ in pronoun_probes(64 * 3)]
    with pytest.raises(ValueError, match="unseen"):
        held_out(pronoun_probes, 3, every)


def test_validation_lines_are_not_training_lines():
    from corpus.heldout import VALID_LINES, training_lines, validation_lines

    valid = validation_lines()
    assert not set(valid) & set(training_lines())
    assert 0.8 * VALID_LINES < len(valid) < VALID_LINES  # some did overlap and were dropped
