"""A tokenizer over a large vocabulary, built for each text from the entries that text can use.

Building a ``tokenizers`` tokenizer holds the GIL in one C call for as long as it reads its
vocabulary: 0.2 s for a WordPiece vocabulary of 262,144 words, 0.8 s for a byte-level BPE
with as many merges. In the server every other session waits that long (issue #25).

WordPiece, BPE and a character vocabulary look up only substrings of a text's words
(WordPiece's greedy longest match, BPE's merges of adjacent symbols, single characters), so
a tokenizer built from the vocabulary entries that are substrings of the text's words, and
for BPE the merges between them in their order, gives that text the same tokens, ids,
offsets and word ids as the full one. :class:`SubsetTokenizer` builds that small tokenizer
per call, with this project's builders (``models.tokenizer``), in well under a millisecond
for a sentence; the vocabulary stays a Python dict, read in Python steps.
"""

from __future__ import annotations

from itertools import chain
from operator import add, itemgetter

from tokenizers import Encoding, Tokenizer, pre_tokenizers

from models.bpe import SPACE, build_bpe
from models.pieces import PIECE, paced, pieces
from models.tokenizer import UNK, char_tokenizer, split_words, vocab_of, wordpiece_tokenizer

SUBSET_FROM = 16_384  # vocabularies of at least this many entries are built per text
_PREFIX = "##"  # WordPiece's continuing-subword prefix (``models.tokenizer``'s builder)


class SubsetTokenizer:
    """A ``tokenizers.Tokenizer`` stand-in (``encode``, ``decode``, ``id_to_token``,
    ``token_to_id``, ``get_vocab``, ``get_added_tokens_decoder``, ``model``) over a spec of
    ``upload.tokenizer_spec``: ``kind`` "wordpiece", "bpe", "sentencepiece" or "char",
    ``vocab`` token -> id.

    Args:
        kind: which builder of ``models.tokenizer`` or ``models.bpe`` makes the per-text
            tokenizers.
        vocab: token -> id; kept, not copied: do not modify it.
        merges: BPE merges (pairs of tokens) in priority order.
        add_prefix_space, special: byte-level BPE's settings (``models.bpe.bpe_tokenizer``),
            when ``settings`` is not given.
        max_input_chars_per_word: WordPiece's longest word before it gives ``[UNK]``.
        settings: a BPE spec's other fields (``models.bpe.build_bpe``).
    """

    def __init__(
        self,
        kind: str,
        vocab: dict[str, int],
        merges=(),
        add_prefix_space: bool = False,
        special=(),
        max_input_chars_per_word: int = 64,
        settings: dict | None = None,
    ):
        if settings is None:
            settings = {"add_prefix_space": add_prefix_space, "special": list(special)}
        self.kind, self._vocab, self._settings = kind, vocab, settings
        # added tokens (matched as literal strings) and, for SentencePiece, the tokens every
        # per-text tokenizer needs: the unknown token and the 256 byte tokens
        self._special = [*settings.get("special", ()), *settings.get("normalized", ())]
        always = [settings.get("unk"), *(f"<0x{b:02X}>" for b in range(256))]
        self._always = [t for t in always if kind == "sentencepiece" and t in vocab]
        self._always += [t for t in (settings.get("bos"), settings.get("eos")) if t is not None]
        self._max_chars = max_input_chars_per_word
        tokens, ids = list(vocab), list(vocab.values())
        self._token_of: dict[int, str] = {}  # id -> token
        for part_ids, part_tokens in pieces(ids, tokens):
            self._token_of.update(zip(part_ids, part_tokens, strict=True))
        self._longest = max(max(map(len, part)) for part in pieces(tokens))  # characters
        # a+b -> the rank of its first merge, and the ranks of others that make it (rare),
        # built by C loops (map, zip, dict) in pieces (models.pieces): a Python loop over
        # 262,144 merges took 0.5 s of the server's interpreter (issue #25). Tuples of
        # strings, not lists: the collector stops tracking them, a list it walks each pass
        self._merges = merges
        self._firsts = tuple(chain.from_iterable(map(itemgetter(0), p) for p in pieces(merges)))
        self._seconds = tuple(chain.from_iterable(map(itemgetter(1), p) for p in pieces(merges)))
        self._rank_of: dict[str, int] = {}
        self._more_ranks: dict[str, list[int]] = {}
        firsts, seconds = self._firsts, self._seconds
        for start in paced(reversed(range(0, len(merges), PIECE))):  # lowest rank last
            stop = min(start + PIECE, len(merges))
            made = list(map(add, firsts[start:stop], seconds[start:stop]))  # a + b
            self._rank_of.update(zip(reversed(made), range(stop - 1, start - 1, -1), strict=True))
        if len(self._rank_of) < len(merges):  # rare: the same token from two merges
            for rank, made in enumerate(map(add, self._firsts, self._seconds)):
                if self._rank_of[made] != rank:
                    self._more_ranks.setdefault(made, []).append(rank)
        self._probe = self._build(self._required() or {UNK: 0}, [])
        if kind == "bpe":  # every byte as a token: encoding a text shows its byte-level words
            alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
            plain = {**settings, "bos": None, "eos": None}  # no template over the alphabet
            self._words_probe = build_bpe(kind, {c: i for i, c in enumerate(alphabet)}, [], plain)
        vocab_of.keep(self, vocab)

    @property
    def model(self):
        """A model of this tokenizer's kind (``models.tokenizer.tokenizer_kind`` reads it)."""
        return self._probe.model

    @property
    def post_processor(self):
        """This tokenizer's post-processor (its BOS: ``models.tokenizer.leading_special``)."""
        return self._probe.post_processor

    @property
    def decoder(self):
        """This tokenizer's decoder (``models.tokenizer.tokenizer_kind`` reads it)."""
        return self._probe.decoder

    def _required(self) -> dict[str, int]:
        """The entries every per-text tokenizer holds: added tokens (and a post-processor's
        bos / eos among them), SentencePiece's unknown and byte tokens."""
        return {t: self._vocab[t] for t in (*self._special, *self._always)}

    def _build(self, vocab: dict[str, int], merges: list) -> Tokenizer:
        if self.kind == "char":
            return char_tokenizer(vocab)
        if self.kind in ("bpe", "sentencepiece"):
            return build_bpe(self.kind, vocab, merges, self._settings)
        return wordpiece_tokenizer({UNK: self._vocab.get(UNK, 0), **vocab}, self._max_chars)

    def _words(self, text: str) -> set[str]:
        """The words the full tokenizer would split ``text`` into, as its model sees them."""
        if self.kind == "char":
            return set(text)
        if self.kind == "wordpiece":
            return {w for w in split_words(text) if len(w) <= self._max_chars}
        if self.kind == "sentencepiece":
            return _sentencepiece_words(text, self._special)
        enc = self._words_probe.encode(text, add_special_tokens=False)
        words, word, last = set(), [], None
        for token, index in zip(enc.tokens, enc.word_ids, strict=True):
            if index != last or token in self._special:
                words.add("".join(word))
                word = []
            if token not in self._special:
                word.append(token)
            last = index
        return words | {"".join(word)}

    def _entries(self, words: set[str]) -> dict[str, int]:
        """The vocabulary entries that are substrings of ``words`` (WordPiece: ``##`` after
        a word's first character), at most as long as the vocabulary's longest entry."""
        found: dict[str, int] = {}
        for word in words:
            for i in range(len(word)):
                for j in range(i + 1, min(len(word), i + self._longest) + 1):
                    piece = word[i:j]
                    if self.kind == "wordpiece" and i > 0:
                        piece = _PREFIX + piece
                    if (n := self._vocab.get(piece)) is not None:
                        found[piece] = n
        return found

    def _for_text(self, text: str) -> Tokenizer:
        entries = self._entries(self._words(text))
        merges = []
        if self.kind in ("bpe", "sentencepiece"):
            ranks = sorted(
                r
                for piece in entries
                if piece in self._rank_of
                for r in (self._rank_of[piece], *self._more_ranks.get(piece, ()))
                if self._firsts[r] in entries and self._seconds[r] in entries
            )
            merges = [(self._firsts[r], self._seconds[r]) for r in ranks]
        return self._build({**entries, **self._required()}, merges)

    def encode(self, text: str, add_special_tokens: bool = False) -> Encoding:
        """``text`` as the full tokenizer would encode it."""
        return self._for_text(text).encode(text, add_special_tokens=add_special_tokens)

    def decode(self, ids: list[int], skip_special_tokens: bool = False) -> str:
        """``ids`` as text, as the full tokenizer would decode them."""
        vocab = {self._token_of[i]: i for i in set(ids) if i in self._token_of}
        return self._build({**vocab, **self._required()}, []).decode(
            ids, skip_special_tokens=skip_special_tokens
        )

    def full(self) -> Tokenizer:
        """The library's tokenizer over the whole vocabulary: for a worker (the export's
        metadata), never the server (it holds the GIL while it is built)."""
        return self._build(self._vocab, self._merges)

    def to_str(self) -> str:
        """The JSON of :meth:`full`."""
        return self.full().to_str()

    def id_to_token(self, i: int) -> str | None:
        return self._token_of.get(i)

    def token_to_id(self, token: str) -> int | None:
        return self._vocab.get(token)

    def get_vocab(self, with_added_tokens: bool = True) -> dict[str, int]:
        return dict(self._vocab)

    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        return len(self._vocab)

    def get_added_tokens_decoder(self) -> dict:
        return self._probe.get_added_tokens_decoder()


def _sentencepiece_words(text: str, added: list[str]) -> set[str]:
    """What SentencePiece's BPE model sees of ``text``, a superset: each piece between the
    added tokens it holds, spaces as "▁", with and without a leading "▁" (the legacy
    normalizer starts every piece with one, Metaspace only the first)."""
    parts = [text]
    for token in (t for t in added if t in text):
        parts = [q for p in parts for q in p.split(token)]
    marked = [p.replace(" ", SPACE) for p in parts]
    return {*marked, *(SPACE + p for p in marked)}
