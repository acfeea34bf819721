"""The toy translation task: gold alignments right for the rules, over generated sentences."""

from __future__ import annotations

import random

import pytest

from corpus import translation as tr


@pytest.fixture(scope="module")
def pairs() -> list[tr.Pair]:
    rng = random.Random(7)
    return [tr.sample_pair(rng, tr.LONGEST_WORDS) for _ in range(2000)]


def test_every_target_word_translates_the_source_word_it_is_aligned_to(pairs):
    lex = tr.dictionary()
    for p in pairs:
        assert len(p.target) == len(p.alignment)
        for word, j in zip(p.target, p.alignment, strict=True):
            source = p.source[j]
            if word in (tr.SUBJECT_PARTICLE, tr.OBJECT_PARTICLE):
                assert source in {w for n in tr.NOUNS for w in n}  # the phrase's head noun
            else:
                assert lex[source] == word


def test_each_source_word_is_translated_once_and_particles_follow_their_noun(pairs):
    for p in pairs:
        lexical = [j for w, j in zip(p.target, p.alignment, strict=True) if w not in ("ga", "wo")]
        assert sorted(lexical) == list(range(len(p.source)))  # a permutation of the source
        for particle in ("ga", "wo"):
            k = p.target.index(particle)
            assert p.alignment[k] in p.alignment[:k]  # its noun stands before it


def test_the_word_order_rules(pairs):
    lex = tr.dictionary()
    verbs = {lex[v] for v in tr.VERBS_PAST}
    for p in pairs:
        assert p.target[-1] == "." and p.target[-2] in verbs  # verb last (rule 1)
        assert p.target.index("ga") < p.target.index("wo")  # subject, then object
        subject_noun = p.alignment[p.target.index("ga")]
        assert p.target[0] == lex[p.source[subject_noun]]  # noun first (rule 2)


def test_alignments_cross(pairs):
    """Not monotonic: the verb moves to the end, so at least one pair of target words
    appears in the opposite order of their source words in every sentence."""
    for p in pairs:
        a = p.alignment
        assert any(a[i] > a[k] for i in range(len(a)) for k in range(i + 1, len(a)))


def test_the_dictionary_is_one_to_one_and_fixed():
    lex = tr.dictionary()
    assert len(set(lex.values())) == len(lex)  # no two English words share a Tokan word
    assert not {tr.SUBJECT_PARTICLE, tr.OBJECT_PARTICLE} & set(lex.values())
    parts = [
        {w for n in tr.NOUNS + tr.PLACE_NOUNS for w in n},
        set(tr.ADJECTIVES),
        set(tr.VERBS_PAST),
        set(tr.PREPOSITIONS),
        {d for ds in tr.DETERMINERS.values() for d in ds},
    ]
    assert sum(map(len, parts)) == len(set().union(*parts))  # one part of speech per word
    assert lex["dog"] == tr.dictionary()["dog"] and len(lex) > 150


def test_splits_hold_out_sentences_and_lengths():
    s = tr.splits(n_train=3000, n_heldout=200)
    seen = {p.source for p in s.train}
    assert all(len(p.source) <= tr.TRAIN_MAX_WORDS for p in s.train + s.heldout)
    assert not any(p.source in seen for p in s.heldout)
    assert all(tr.TRAIN_MAX_WORDS < len(p.source) <= tr.LONGEST_WORDS for p in s.longer)
    assert tr.splits(n_train=3000, n_heldout=200) == s  # the same data every time


@pytest.mark.parametrize(
    "text, where",
    [
        ("the dog saw .", "expected a determiner at word 4"),
        ("dog saw the cat .", "expected a determiner at word 1"),
        ("the dog saw the cat", "expected a full stop at word 6"),
        ("the big saw the cat .", "expected a noun at word 3"),
    ],
)
def test_sentences_outside_the_grammar_say_where(text, where):
    with pytest.raises(tr.OutsideGrammar, match=where):
        tr.translate(text.split())
