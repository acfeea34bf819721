"""English -> Tokan: a rule-based toy language whose word alignments are known.

The translation task of the encoder-decoder lessons (issue #10; the path of d2l.ai's
"From Encoder-Decoder To Transformer"). Sentences are drawn from a small English grammar
over the corpus lexicon, and each is translated by fixed rules, so the gold alignment of
every target word is known and is not monotonic. The rules (docs/toy_language.md):

1. Word order subject-object-verb: the subject phrase, then the prepositional phrases,
   then the object phrase, then the verb, then the full stop.
2. Inside a noun phrase the noun comes first, its adjectives follow in the English
   order, and the determiner closes it: "the big red dog" -> "NOUN big red the".
3. A case particle follows each argument: ``ga`` after the subject phrase, ``wo`` after
   the object phrase.
4. A prepositional phrase becomes a postpositional one: "in the park" -> "park the in'".
5. Every English word has one Tokan word (a fixed dictionary of made-up words).

Alignment: each target word is aligned to the one source word it translates; a case
particle to the head noun of its phrase. English grammar::

    S  -> NP_subj V NP_obj PP* "."        NP -> Det Adj* Noun        PP -> Prep NP

Standard library only (the corpus imports nothing else of ours but the lexicon).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache

from corpus.lexicon import ANIMALS, COLORS, OBJECTS, PEOPLE, PLACES, THING_ADJS
from corpus.verbs import VERBS

SUBJECT_PARTICLE, OBJECT_PARTICLE = "ga", "wo"
# Nouns that are also adjectives or verbs elsewhere in the lexicon stay out, so a word's
# part of speech (and so its translation rule) is never ambiguous.
_AMBIGUOUS = {"orange", "watch", "light", "gold", "silver", "square", "round", "cold"}
NOUNS = [
    p for p in ANIMALS[:20] + PEOPLE[:16] + OBJECTS[:24] if p[0] not in _AMBIGUOUS and p[0] != p[1]
]
PLACE_NOUNS = [p for p in PLACES[:16] if p[0] != p[1]]
ADJECTIVES = [a for a in THING_ADJS[:24] + COLORS[:8] if a not in _AMBIGUOUS]
VERBS_PAST = [VERBS[v][2] for v in "see like watch help follow find carry hold clean visit".split()]
DETERMINERS = {"singular": ["the", "a", "this"], "plural": ["the", "some", "these"]}
PREPOSITIONS = ["in", "near", "behind", "under"]
TRAIN_MAX_WORDS = 16  # source words (full stop included) of the training sentences
# The longest held-out sentence: what the encoders read (``max_src`` = 24 tokens, <eos> last;
# models/seq2seq/config.py, a test ties the two). The grammar makes up to 25 words.
LONGEST_WORDS = 23


@dataclass(frozen=True)
class Pair:
    """One sentence pair.

    Attributes:
        source: English words (the full stop is a word).
        target: Tokan words.
        alignment: for each target position, the source position it translates.
    """

    source: tuple[str, ...]
    target: tuple[str, ...]
    alignment: tuple[int, ...]


def _syllables(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("kmnprstlhv") + rng.choice("aeiou") for _ in range(n))


@lru_cache(maxsize=1)
def dictionary() -> dict[str, str]:
    """English word -> Tokan word, for every word the grammar uses; fixed by a seed, the
    same in every process. Particles, determiners and prepositions get short words."""
    english = sorted(
        {w for pair in NOUNS + PLACE_NOUNS for w in pair} | set(ADJECTIVES) | set(VERBS_PAST)
    )
    closed = sorted({d for ds in DETERMINERS.values() for d in ds} | set(PREPOSITIONS))
    rng = random.Random(20261124)
    taken = {SUBJECT_PARTICLE, OBJECT_PARTICLE, "."}
    out = {".": "."}
    for words, length in ((closed, 1), (english, 2)):
        for word in words:
            toy = _syllables(rng, length)
            while toy in taken:
                toy = _syllables(rng, length + 1)
            taken.add(toy)
            out[word] = toy
    return out


def _noun_phrase(rng: random.Random, nouns, n_adj: int) -> list[tuple[str, str]]:
    """(word, part of speech) of Det Adj* Noun."""
    number = rng.choice(["singular", "plural"])
    noun = rng.choice(nouns)[0 if number == "singular" else 1]
    adjs = rng.sample(ADJECTIVES, n_adj)
    return (
        [(rng.choice(DETERMINERS[number]), "det")] + [(a, "adj") for a in adjs] + [(noun, "noun")]
    )


def sample_source(rng: random.Random, n_adj: tuple[int, int, int], n_pp: int) -> list[str]:
    """An English sentence of the grammar: adjectives per noun phrase (subject, object,
    every PP) from ``n_adj``'s ranges, ``n_pp`` prepositional phrases."""
    subject = _noun_phrase(rng, NOUNS, n_adj[0])
    obj = _noun_phrase(rng, NOUNS, n_adj[1])
    pps = []
    for _ in range(n_pp):
        pps += [(rng.choice(PREPOSITIONS), "prep")] + _noun_phrase(rng, PLACE_NOUNS, n_adj[2])
    verb = [(rng.choice(VERBS_PAST), "verb")]
    return [w for w, _ in subject + verb + obj + pps] + ["."]


class OutsideGrammar(ValueError):
    """The English sentence is not one the toy grammar makes (no gold translation)."""


def _parse_np(words: list[str], i: int) -> tuple[list[int], int]:
    """Positions of Det Adj* Noun starting at ``i`` and the position after it."""
    nouns = {w for pair in NOUNS + PLACE_NOUNS for w in pair}
    if i >= len(words) or words[i] not in {d for ds in DETERMINERS.values() for d in ds}:
        raise OutsideGrammar(f"expected a determiner at word {i + 1}")
    j = i + 1
    while j < len(words) and words[j] in ADJECTIVES:
        j += 1
    if j >= len(words) or words[j] not in nouns:
        raise OutsideGrammar(f"expected a noun at word {j + 1}")
    return list(range(i, j + 1)), j + 1


def _np_order(span: list[int]) -> list[int]:
    """Rule 2: noun, adjectives in English order, determiner."""
    return [span[-1], *span[1:-1], span[0]]


def translate(source: list[str]) -> Pair:
    """The Tokan translation and gold alignment of an English sentence of the grammar.

    Raises:
        OutsideGrammar: naming the first word that does not fit.
    """
    words = list(source)
    subject, i = _parse_np(words, 0)
    if i >= len(words) or words[i] not in VERBS_PAST:
        raise OutsideGrammar(f"expected a verb at word {i + 1}")
    verb = i
    obj, i = _parse_np(words, i + 1)
    pps = []
    while i < len(words) and words[i] in PREPOSITIONS:
        span, j = _parse_np(words, i + 1)
        pps.append((i, span))
        i = j
    if words[i:] != ["."]:
        raise OutsideGrammar(f"expected a full stop at word {i + 1}")
    order = _np_order(subject) + [("ga", subject[-1])]
    for prep, span in pps:
        order += _np_order(span) + [prep]
    order += _np_order(obj) + [("wo", obj[-1]), verb, i]
    lex = dictionary()
    target = [item[0] if isinstance(item, tuple) else lex[words[item]] for item in order]
    alignment = [item[1] if isinstance(item, tuple) else item for item in order]
    return Pair(tuple(words), tuple(target), tuple(alignment))


def target_roles(pair: Pair) -> list[str]:
    """The role of each target word: ``"particle"`` for ``ga`` and ``wo``, else the part
    of speech of the source word it translates (``noun``, ``adjective``, ``determiner``,
    ``verb``, ``preposition``, ``stop``)."""
    nouns = {w for p in NOUNS + PLACE_NOUNS for w in p}
    dets = {d for ds in DETERMINERS.values() for d in ds}
    kinds = [(nouns, "noun"), (set(ADJECTIVES), "adjective"), (dets, "determiner"),
             (set(VERBS_PAST), "verb"), (set(PREPOSITIONS), "preposition"), ({"."}, "stop")]  # fmt: skip
    roles = []
    for word, j in zip(pair.target, pair.alignment, strict=True):
        if word in (SUBJECT_PARTICLE, OBJECT_PARTICLE):
            roles.append("particle")
        else:
            roles.append(next(name for words, name in kinds if pair.source[j] in words))
    return roles


def sample_pair(rng: random.Random, max_words: int, min_words: int = 0) -> Pair:
    """A random pair whose source has between ``min_words`` and ``max_words`` words."""
    while True:
        n_pp = rng.choice([0, 1, 2, 3])
        source = sample_source(rng, tuple(rng.choice([0, 1, 2]) for _ in range(3)), n_pp)
        if min_words <= len(source) <= max_words:
            return translate(source)


@dataclass(frozen=True)
class Splits:
    """Training pairs and the held-out sets: ``heldout`` (training lengths, sentences not
    in training) and ``longer`` (longer than any training sentence)."""

    train: list[Pair]
    heldout: list[Pair]
    longer: list[Pair]


def splits(n_train: int = 60_000, n_heldout: int = 500, seed: int = 0) -> Splits:
    """The task's data, the same on every call with the same arguments."""
    rng = random.Random(seed)
    train = [sample_pair(rng, TRAIN_MAX_WORDS) for _ in range(n_train)]
    seen = {p.source for p in train}
    held_rng = random.Random(seed + 1_000_003)  # seeds the training text never uses
    heldout: list[Pair] = []
    while len(heldout) < n_heldout:
        pair = sample_pair(held_rng, TRAIN_MAX_WORDS)
        if pair.source not in seen:
            heldout.append(pair)
    longer = [sample_pair(held_rng, LONGEST_WORDS, TRAIN_MAX_WORDS + 1) for _ in range(n_heldout)]
    return Splits(train, heldout, longer)
