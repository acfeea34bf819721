"""Deterministic generator of the English training text for the shipped models.

Everything is written by hand: a broad lexicon of real English words
(:mod:`corpus.lexicon`, :mod:`corpus.verbs`), sentence templates
(:mod:`corpus.templates`) filled slot by slot (:mod:`corpus.slots`), and a set of
sentence builders, here and in :mod:`corpus.probes`. The text is made to hold the
structure that makes attention heads worth looking at:

* subject-verb number agreement across distracting prepositional phrases and
  relative clauses ("the keys to the old cabinet are on the table ."),
* pronouns that agree with an earlier name or noun ("Mary lost her keys
  because she was late ."),
* the indirect-object pattern with a repeated name ("when Mary and John went to
  the store , John gave a drink to Mary ."),
* repeated phrases for copying and induction heads,
* everyday sentences over a lexicon of well over 1,500 word types.

Lines are words separated by single spaces; punctuation (". , ? !") is its own
token and contractions keep their apostrophe ("didn't"). Names, "I", days and
months are capitalised; the tokenizer lowercases, and :func:`lexicon` lists the
lowercased word types. The probe makers of :mod:`corpus.probes` are re-exported
here, as are the word lists other modules read through this one.
"""

from __future__ import annotations

import random
import re
from functools import lru_cache

from corpus.lexicon import (
    ADJECTIVES,
    ADVERBS,
    ANIMALS,
    BODY,
    COLORS,
    CONTRACTIONS,
    DAY_PARTS,
    DAYS,
    EXTRA_WORDS,
    FEMALE_NAMES,
    FOODS,
    FUNCTION_WORDS,
    FURNITURE,
    INSTRUMENTS,
    MALE_NAMES,
    MASS_FOODS,
    MEALS,
    MONTHS,
    NAMES,
    NUMBERS,
    OBJECTS,
    OTHER_NUMBERS,
    PEOPLE,
    PLACES,
    SEASONS,
    SPORTS,
    SUBJECTS,
    TIME_WORDS,
    VEHICLE_PAIRS,
    VEHICLES,
    WEATHER,
    WEATHER_NOUNS,
)
from corpus.probes import (
    _agreement,
    _check_n,
    _ioi,
    _pronoun,
    agreement_probes,
    ioi_probes,
    pronoun_probes,
)
from corpus.slots import _PL, _SG, Rng, _compile, _fill
from corpus.templates import (
    ANIMATE_REL,
    CLAUSES,
    EVERYDAY_TEMPLATES,
    FIXED_SENTENCES,
    IOI_INTROS,
    PP_PREPS,
    PRONOUN_FRAMES,
    REASONS,
)
from corpus.verbs import VERBS

# The public API, and the names other modules (and tests) reach through this module.
__all__ = [
    "generate_corpus",
    "lexicon",
    "agreement_probes",
    "ioi_probes",
    "pronoun_probes",
    "NAMES",
    "MALE_NAMES",
    "FEMALE_NAMES",
    "VERBS",
    "_SG",  # singular nouns by kind, from corpus.slots
    "_PL",  # plural nouns by kind, from corpus.slots
]

_EVERYDAY = [_compile(t) for t in EVERYDAY_TEMPLATES]


# ------------------------------------------------------------------ line builders


def _everyday(rng: Rng) -> str:
    if rng.random() < 0.03:
        return rng.choice(FIXED_SENTENCES)
    return _fill(rng.choice(_EVERYDAY), rng)


def _induction(rng: Rng) -> str:
    roll = rng.random()
    if roll < 0.6:
        phrase = " ".join(rng.choices(_phrase_words(), k=rng.randint(4, 16)))
        if roll < 0.35:
            return f"{phrase} . {phrase} ."
        if roll < 0.5:
            return f"{phrase} . {_everyday(rng)} {phrase} ."
        short = " ".join(phrase.split()[:6])
        return f"{short} , {short} , {short} ."
    sentence = _everyday(rng)[:-2]
    if roll < 0.75:
        return f"{sentence} . {sentence} again ."
    if roll < 0.85:
        return f"{sentence} . yes , {sentence} ."
    return f"{sentence} . I said {sentence} ."


# The line mix: a line's kind is the first whose bound exceeds its roll, uniform in [0, 1)
# (cumulative bounds; generate_corpus's docstring states the shares, a test holds both).
LINE_MIX = (("agreement", 0.16), ("pronoun", 0.28), ("indirect-object", 0.42),
            ("repeated-phrase", 0.72), ("everyday", 1.0))  # fmt: skip


def line_shares() -> dict[str, float]:
    """Each kind of line's share of the corpus (0..1, summing to 1), from :data:`LINE_MIX`."""
    kinds, bounds = zip(*LINE_MIX, strict=True)
    lows = (0.0, *bounds[:-1])
    return {k: round(b - a, 6) for k, a, b in zip(kinds, lows, bounds, strict=True)}


def _line(rng: Rng) -> str:
    roll = rng.random()
    kind = next(kind for kind, bound in LINE_MIX if roll < bound)
    if kind == "repeated-phrase":
        return _induction(rng)
    if kind == "everyday":
        return _everyday(rng)
    make = {"agreement": _agreement, "pronoun": _pronoun, "indirect-object": _ioi}[kind]
    prefix, answer, _, rest = make(rng)
    return f"{prefix} {answer} {rest}"


# ------------------------------------------------------------------------ lexicon


@lru_cache(maxsize=1)
def _lexicon_set() -> frozenset[str]:
    words: set[str] = set(".,?!")
    lists = [
        NAMES,
        FUNCTION_WORDS,
        CONTRACTIONS,
        EXTRA_WORDS,
        ADJECTIVES,
        ADVERBS,
        VEHICLES,
        MASS_FOODS,
        COLORS,
        WEATHER,
        WEATHER_NOUNS,
        DAYS,
        MONTHS,
        DAY_PARTS,
        SEASONS,
        TIME_WORDS,
        NUMBERS,
        OTHER_NUMBERS,
        SUBJECTS,
        SPORTS,
        INSTRUMENTS,
        MEALS,
    ]
    for pairs in (PEOPLE, ANIMALS, OBJECTS, FURNITURE, VEHICLE_PAIRS, PLACES, FOODS, BODY):
        lists.append([w for pair in pairs for w in pair])
    lists.extend(list(forms) for forms in VERBS.values())
    templates = EVERYDAY_TEMPLATES + FIXED_SENTENCES + REASONS + CLAUSES + IOI_INTROS + PP_PREPS
    templates += [t for t, _, _ in PRONOUN_FRAMES] + list(ANIMATE_REL["person"])
    templates += ["that which very too quite in every day at night was were has have"]
    templates += ["again yes I said"]
    for text in templates:
        lists.append(re.sub(r"\{[^}]*\}", " ", text).split())
    for items in lists:
        words.update(w.lower() for w in items)
    return frozenset(words)


@lru_cache(maxsize=1)
def _phrase_words() -> list[str]:
    """Every word of the lexicon in its written form (names capitalised)."""
    display = {w.lower(): w for w in NAMES + DAYS + MONTHS + ["I", "English"]}
    return [display.get(w, w) for w in sorted(_lexicon_set()) if w not in ".,?!"]


# ---------------------------------------------------------------------- public API


def lexicon() -> list[str]:
    """Return the sorted list of every word type the generator can emit.

    Words are lowercased; the punctuation tokens ". , ? !" are items of their own.
    """
    return sorted(_lexicon_set())


def generate_corpus(n_lines: int, seed: int = 0) -> list[str]:
    """Return ``n_lines`` lines of training text, a mix of all the kinds of line.

    Deterministic: the same ``(n_lines, seed)`` gives the same list, and a shorter
    corpus is a prefix of a longer one with the same seed. Each line's kind is drawn
    with the shares of :data:`LINE_MIX` (:func:`line_shares`): 16% agreement lines, 12%
    pronoun lines, 14% indirect-object lines, 30% repeated phrases and 28% everyday
    sentences. Raises ValueError if ``n_lines`` is not a positive int.
    """
    _check_n(n_lines, "n_lines")
    rng = random.Random(f"corpus:{seed}")
    return [_line(rng) for _ in range(n_lines)]
