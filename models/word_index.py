"""Closest known words to an unknown one: an index built once per vocabulary.

The visualizer lists the unknown words of a sentence with a few known words close to each
(``inference.text_input.suggest``). The index orders a vocabulary's whole words once; each
look-up scores only the words whose length can reach the cutoff, in C with the GIL
released (rapidfuzz), so a 262,144-word vocabulary costs a fraction of a second per word
and nothing per sentence beyond the words shown.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable

import numpy as np
from rapidfuzz import fuzz, process
from tokenizers import Tokenizer

from models.tokenizer import UNK, PerTokenizer, split_words, vocab_of


class WordIndex:
    """The known words of one vocabulary, ordered once by length, to find the closest
    ones to an unknown word (:meth:`closest`).

    Similarity is the Indel ratio 2·M / (len(a) + len(b)), M the length of the longest
    common subsequence (``rapidfuzz.fuzz.ratio``, like ``difflib``'s ratio). A ratio of at
    least ``cutoff`` needs len(b) within [len(a)·c/(2-c), len(a)·(2-c)/c]: only words of
    those lengths are compared. rapidfuzz's ``cdist`` releases the GIL while it scores,
    so other sessions' threads run meanwhile.
    """

    def __init__(self, words: Iterable[str], ids: Iterable[int] | None = None):
        """``words`` and, optionally, their ``ids``: among equally close words, the lower id
        first (a vocabulary's most frequent); by default, the given order."""
        words = list(words)
        ids = np.arange(len(words)) if ids is None else np.fromiter(ids, np.int64, len(words))
        lengths = np.fromiter(map(len, words), np.int64, len(words))  # (V,)
        order = np.lexsort((ids, lengths))  # (V,) by length, then id (C, not Python, sorts)
        self.words = [words[i] for i in order]
        self._lengths = lengths[order].tolist()

    @classmethod
    def of(cls, tokenizer: Tokenizer) -> WordIndex:
        """The index of ``tokenizer``'s whole words (:func:`known_words`), ties by id."""
        vocab = {t: i for t, i in vocab_of(tokenizer).items() if not t.startswith("##")}
        vocab.pop(UNK, None)
        return cls(vocab.keys(), vocab.values())

    def closest(self, word: str, n: int = 3, cutoff: float = 0.6) -> list[str]:
        """Up to ``n`` known words with a similarity to ``word`` (normalized as the
        tokenizer does) of at least ``cutoff``, most similar first (ties: shorter, then in the index's order)."""
        key = split_words(word)
        target = "".join(key) if key else word.lower()
        q = len(target)
        lo = bisect_left(self._lengths, int(np.ceil(q * cutoff / (2 - cutoff) - 1e-9)))
        hi = bisect_right(self._lengths, int(np.floor(q * (2 - cutoff) / cutoff + 1e-9)))
        if not target or lo >= hi:
            return []
        scores = process.cdist(
            [target], self.words[lo:hi], scorer=fuzz.ratio, score_cutoff=100 * cutoff, workers=1
        )[0]  # (hi - lo,) 0 below the cutoff
        hits = np.flatnonzero(scores >= 100 * cutoff)
        best = hits[np.argsort(-scores[hits], kind="stable")[:n]]  # ties keep the index's order
        return [self.words[lo + i] for i in best]


word_index = PerTokenizer(WordIndex.of)
word_index.__doc__ = """``tokenizer``'s :class:`WordIndex`, built on first use and kept while
the tokenizer lives (:class:`models.tokenizer.PerTokenizer`). Building reads and orders the
vocabulary, once: 262,144 words take about 1 s."""


def closest_words(tokenizer: Tokenizer, word: str, n: int = 3) -> list[str]:
    """Up to ``n`` known words closest to ``word`` (:meth:`WordIndex.closest` on
    :func:`word_index`, built once per tokenizer)."""
    return word_index(tokenizer).closest(word, n)
