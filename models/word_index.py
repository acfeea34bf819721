"""Closest known words to an unknown one: an index built once per vocabulary.

The visualizer lists the unknown words of a sentence with a few known words close to each
(``inference.text_input.suggest``). The index orders a vocabulary's whole words once; each
look-up scores only the words whose length can reach the cutoff, in C with the GIL
released (rapidfuzz), so a 262,144-word vocabulary costs a fraction of a second per word
and nothing per sentence beyond the words shown.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from rapidfuzz import fuzz, process
from tokenizers import Tokenizer

from models.pieces import pieces
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
        self._set(_by_length(list(words), ids))

    def _set(self, ordered: list[str]) -> None:
        self.words = ordered  # by length, then id
        lengths = [np.fromiter(map(len, p), np.int64) for p in pieces(ordered)]  # a C loop each
        self._lengths = np.concatenate(lengths) if lengths else np.zeros(0, np.int64)  # (V,)

    @classmethod
    def ordered(cls, words: list[str]) -> WordIndex:
        """The index of ``words`` already in its order (:func:`index_words`), as the
        upload's worker sends it: the server only measures their lengths, a piece at a
        time (``models.pieces``), where ordering 262,144 words held its interpreter
        0.5 s (issue #25).

        Raises:
            ValueError: if the words are not ordered by length.
        """
        index = cls.__new__(cls)
        index._set(words)
        if np.any(np.diff(index._lengths) < 0):
            raise ValueError("the word index is not ordered by length")
        return index

    @classmethod
    def of(cls, tokenizer: Tokenizer) -> WordIndex:
        """The index of ``tokenizer``'s whole words (:func:`index_words`), ties by id."""
        return cls.ordered(index_words(vocab_of(tokenizer)))

    def closest(self, word: str, n: int = 3, cutoff: float = 0.6) -> list[str]:
        """Up to ``n`` known words with a similarity to ``word`` (normalized as the
        tokenizer does) of at least ``cutoff``, most similar first (ties: shorter, then in the index's order)."""
        key = split_words(word)
        target = "".join(key) if key else word.lower()
        q = len(target)
        shortest = int(np.ceil(q * cutoff / (2 - cutoff) - 1e-9))
        longest = int(np.floor(q * (2 - cutoff) / cutoff + 1e-9))
        lo = int(np.searchsorted(self._lengths, shortest, side="left"))
        hi = int(np.searchsorted(self._lengths, longest, side="right"))
        if not target or lo >= hi:
            return []
        scores = process.cdist(
            [target], self.words[lo:hi], scorer=fuzz.ratio, score_cutoff=100 * cutoff, workers=1
        )[0]  # (hi - lo,) 0 below the cutoff
        hits = np.flatnonzero(scores >= 100 * cutoff)
        best = hits[np.argsort(-scores[hits], kind="stable")[:n]]  # ties keep the index's order
        return [self.words[lo + i] for i in best]


def index_words(vocab: dict[str, int]) -> list[str]:
    """A vocabulary's whole words (no ``##`` continuation piece, no ``[UNK]``) in a
    :class:`WordIndex`'s order: by length, then id. Run by an upload's worker for the
    server (``upload.spec_wire``), and for a shipped vocabulary on first use."""
    whole = {t: i for t, i in vocab.items() if not t.startswith("##")}
    whole.pop(UNK, None)
    return _by_length(list(whole), whole.values())


def _by_length(words: list[str], ids: Iterable[int] | None) -> list[str]:
    """``words`` ordered by length, then by ``ids`` (default: their order)."""
    ids = np.arange(len(words)) if ids is None else np.fromiter(ids, np.int64, len(words))
    lengths = np.fromiter(map(len, words), np.int64, len(words))  # (V,)
    return [words[i] for i in np.lexsort((ids, lengths))]  # C, not Python, sorts


word_index = PerTokenizer(WordIndex.of)
word_index.__doc__ = """``tokenizer``'s :class:`WordIndex`, built on first use and kept while
the tokenizer lives (:class:`models.tokenizer.PerTokenizer`). Building reads and orders the
vocabulary, once: 262,144 words take about 1 s."""


def closest_words(tokenizer: Tokenizer, word: str, n: int = 3) -> list[str]:
    """Up to ``n`` known words closest to ``word`` (:meth:`WordIndex.closest` on
    :func:`word_index`, built once per tokenizer)."""
    return word_index(tokenizer).closest(word, n)
