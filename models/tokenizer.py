"""Tokenizers, built on the ``tokenizers`` library: four kinds, each built by our code.

* ``wordpiece``: this project's word-level tokenizer with character fallback. Known
  words are single tokens. An unknown word is split into WordPiece character pieces
  (``c ##a ##t``) and reported as unknown; a character that is not in the alphabet at
  all (emoji, a rare script) becomes ``[UNK]``. Text is NFKD-normalized, accents are
  stripped and everything is lowercased, so "Café" and "cafe" are the same word.
* ``char``: a character vocabulary (nanoGPT's ``meta.pkl``): every character is a
  token, and there is no ``[UNK]``: :func:`encode` leaves out the characters the
  vocabulary lacks and lists them.
* ``bpe``: byte-level BPE (Radford et al. 2019), GPT-2's and its successors' (GPT-NeoX,
  Qwen2, Llama-3; ``models/bpe.py``): every byte of any text has a token, so nothing is
  unknown.
* ``sentencepiece``: SentencePiece-style BPE with byte fallback (Llama 1/2, Mistral;
  ``models/bpe.py``): a space is "▁", a character the vocabulary lacks is its UTF-8 bytes.

A tokenizer is one JSON string (``exported/tokenizer.json``, checkpoint and graph
metadata).
"""

from __future__ import annotations

import string
import threading
import weakref
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers

from models.bpe import sentencepiece_text

UNK = "[UNK]"
# Words keep an inner apostrophe ("didn't"); every other symbol stands alone.
WORD_PATTERN = r"\w+(?:'\w+)*|[^\w\s]"
ALPHABET = string.ascii_lowercase + string.digits + string.punctuation


def _pipeline(tokenizer: Tokenizer) -> Tokenizer:
    tokenizer.normalizer = normalizers.Sequence(
        [normalizers.NFKD(), normalizers.StripAccents(), normalizers.Lowercase()]
    )
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Split(Regex(WORD_PATTERN), "isolated")]
    )
    tokenizer.decoder = decoders.WordPiece(prefix="##", cleanup=True)
    return tokenizer


_PROBE = _pipeline(Tokenizer(models.WordPiece({UNK: 0}, unk_token=UNK)))  # built once


def split_words(text: str) -> list[str]:
    """Normalize and pre-tokenize ``text`` into words exactly as the tokenizer does."""
    probe = _PROBE
    normalized = probe.normalizer.normalize_str(text)
    return [w for w, _ in probe.pre_tokenizer.pre_tokenize_str(normalized)]


def build_tokenizer(texts: Iterable[str], max_words: int | None = None) -> Tokenizer:
    """Build the vocabulary from training text.

    Args:
        texts: training lines.
        max_words: keep only this many most frequent words (None: all).

    Returns:
        A ``tokenizers.Tokenizer``: id 0 is ``[UNK]``, then the character
        alphabet (as words and as ``##`` continuation pieces), then the words
        by descending frequency (ties alphabetical).
    """
    counts = Counter(w for text in texts for w in split_words(text))
    words = sorted(counts, key=lambda w: (-counts[w], w))
    if max_words is not None:
        words = words[:max_words]
    vocab: dict[str, int] = {UNK: 0}
    for piece in list(ALPHABET) + ["##" + c for c in ALPHABET] + words:
        vocab.setdefault(piece, len(vocab))
    return wordpiece_tokenizer(vocab)


def wordpiece_tokenizer(vocab: dict[str, int], max_input_chars_per_word: int = 64) -> Tokenizer:
    """This project's word-level tokenizer over ``vocab`` (token -> id, with ``[UNK]``):
    NFKD, accents stripped, lowercase, words and punctuation split by ``WORD_PATTERN``,
    unknown words as WordPiece ``##`` pieces."""
    model = models.WordPiece(
        vocab, unk_token=UNK, max_input_chars_per_word=max_input_chars_per_word
    )
    return _pipeline(Tokenizer(model))


def char_tokenizer(stoi: dict[str, int]) -> Tokenizer:
    """A character tokenizer (nanoGPT's ``meta.pkl`` vocabulary): every character, spaces
    and newlines too, is a token, with exactly the ids of ``stoi``.

    No ``[UNK]`` is added (the model has no row for it): :func:`encode` leaves out the
    characters outside the vocabulary and lists them in ``Encoded.left_out``. Decoding
    fuses the characters back together without spaces.
    """
    tokenizer = Tokenizer(models.WordLevel(dict(stoi), unk_token=UNK))
    tokenizer.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    tokenizer.decoder = decoders.Fuse()
    return tokenizer


def tokenizer_kind(tokenizer: Tokenizer) -> str:
    """``"wordpiece"``, ``"char"``, ``"bpe"`` (byte-level) or ``"sentencepiece"``: which of
    this module's or ``models.bpe``'s builders made it (a BPE model with a ``ByteLevel``
    decoder is byte-level)."""
    model = tokenizer.model
    if isinstance(model, models.BPE):
        return "bpe" if isinstance(tokenizer.decoder, decoders.ByteLevel) else "sentencepiece"
    return "char" if isinstance(model, models.WordLevel) else "wordpiece"


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's map of the 256 bytes to printable characters (``encoder.py``'s
    ``bytes_to_unicode``): printable Latin-1 bytes stand for themselves, the others
    (space, newline, control bytes) for the characters from U+0100 on (space is ``Ġ``)."""
    kept = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1)]
    kept += range(ord("®"), ord("ÿ") + 1)
    moved = [b for b in range(256) if b not in kept]
    return {**{b: chr(b) for b in kept}, **{b: chr(256 + n) for n, b in enumerate(moved)}}


BYTE_OF = {ch: b for b, ch in _bytes_to_unicode().items()}


def byte_level_text(token: str) -> str:
    """A byte-level BPE token as the text it stands for (``Ġthe`` -> `` the``, ``Ċ`` ->
    a newline); bytes that are not whole UTF-8 characters as ``\\xNN``. A token with a
    character outside GPT-2's byte map (an added token such as ``<|endoftext|>`` is
    inside it) is returned unchanged."""
    if any(ch not in BYTE_OF for ch in token):
        return token
    return bytes(BYTE_OF[ch] for ch in token).decode("utf-8", errors="backslashreplace")


def token_text(tokenizer: Tokenizer, token: str) -> str:
    """The text a vocabulary entry stands for: byte-level BPE tokens decoded to text
    (:func:`byte_level_text`), SentencePiece's with "▁" as a space and byte tokens as their
    byte (``models.bpe.sentencepiece_text``), every other kind's tokens as they are."""
    kind = tokenizer_kind(tokenizer)
    if kind == "sentencepiece":
        return sentencepiece_text(token)
    return byte_level_text(token) if kind == "bpe" else token


class PerTokenizer:
    """What ``build(tokenizer)`` returns, built on first use and kept while the tokenizer
    lives (a shipped model's for the server's life; an upload's until its session drops
    it). Thread-safe; the build runs outside the lock, so one vocabulary's build never
    makes a look-up of another wait."""

    def __init__(self, build):
        self._build = build
        self._kept: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def __call__(self, tokenizer: Tokenizer):
        with self._lock:
            value = self._kept.get(tokenizer)
        if value is None:
            value = self._build(tokenizer)
            with self._lock:
                value = self._kept.setdefault(tokenizer, value)
        return value

    def keep(self, tokenizer: Tokenizer, value) -> None:
        """Use ``value`` as ``build(tokenizer)`` (a caller that already holds it: the
        vocabulary an uploaded tokenizer was built from, ``upload.tokenizer_spec.build``)."""
        with self._lock:
            self._kept[tokenizer] = value


vocab_of = PerTokenizer(lambda tokenizer: tokenizer.get_vocab())
vocab_of.__doc__ = """``tokenizer.get_vocab()`` (token -> id), read once per tokenizer: for a
262,144-word vocabulary each call holds the GIL 0.36 s, and the views of one rerun asked
for it several times (issue #25). Shared: do not modify it."""


def load_tokenizer(text: str) -> Tokenizer:
    """Load a tokenizer from its JSON string (no code is executed).

    Raises:
        ValueError: if the JSON is not a tokenizer.
    """
    try:
        return Tokenizer.from_str(text)
    except Exception as exc:  # the Rust side raises a plain Exception
        raise ValueError(f"not a valid tokenizer: {exc}") from exc


def max_token_id(tokenizer: Tokenizer) -> int:
    """The largest id ``tokenizer`` can produce (vocabulary and added tokens); -1 if none."""
    return max(tokenizer.get_vocab(with_added_tokens=True).values(), default=-1)


def check_token_ids(tokenizer: Tokenizer, vocab_size: int, source: str) -> None:
    """Every id the tokenizer produces must index the model's embedding (ids < ``vocab_size``).

    Raises:
        ValueError: naming ``source``, the largest id and ``vocab_size``; otherwise the
            model would fail later, on the first sentence that uses such a token.
    """
    top = max_token_id(tokenizer)
    if top >= vocab_size:
        raise ValueError(
            f"{source}: the tokenizer produces token id {top}, but config vocab_size is "
            f"{vocab_size} (every id must be below it)"
        )


@dataclass(frozen=True)
class Encoded:
    """A tokenized sentence.

    ``ids`` and ``tokens`` have one entry per token (``tokens`` as text: a byte-level
    BPE token decoded, :func:`token_text`); ``unknown[i]`` is True when token i belongs
    to a word that is not a single vocabulary entry (word-level tokenizers only);
    ``unknown_words`` lists those words (original spelling, in order) and
    ``unknown_starts`` the index of each one's first token; ``left_out`` lists the
    characters a character vocabulary lacks, which were left out of the text (each
    occurrence, in order).
    """

    ids: list[int]
    tokens: list[str]
    unknown: list[bool]
    unknown_words: list[str]
    left_out: list[str] = field(default_factory=list)
    unknown_starts: list[int] = field(default_factory=list)

    def unknown_words_before(self, T: int) -> list[str]:
        """The unknown words that begin within the first ``T`` tokens (those shown)."""
        return [w for w, i in zip(self.unknown_words, self.unknown_starts, strict=True) if i < T]


def leading_special(tokenizer: Tokenizer, ids: list[int]) -> list[int]:
    """The ids a BPE tokenizer's post-processor puts before a text's ``ids`` (Llama's
    ``<s>``, Llama-3's ``<|begin_of_text|>``: what its model always saw first), or []."""
    if not ids or tokenizer.post_processor is None:
        return []
    framed = tokenizer.post_processor.process(tokenizer.encode(""), add_special_tokens=True).ids
    return list(framed[:1]) if framed and tokenizer.id_to_token(framed[0]) else []


def encode(tokenizer: Tokenizer, text: str) -> Encoded:
    """Tokenize any string, without a post-processor's EOS; a BPE tokenizer whose
    post-processor puts a BOS first (Llama's ``<s>``) gets it first, as ``transformers``
    gives it to the model. Empty or whitespace-only
    text gives zero tokens from a word-level tokenizer; a character or BPE tokenizer keeps
    every whitespace character.
    A character tokenizer leaves out the characters its vocabulary lacks
    (``Encoded.left_out``)."""
    kind = tokenizer_kind(tokenizer)
    left_out: list[str] = []
    if kind == "char":
        known = vocab_of(tokenizer)
        left_out = [ch for ch in text if ch not in known]
        text = "".join(ch for ch in text if ch in known)
    enc = tokenizer.encode(text, add_special_tokens=False)
    if kind != "wordpiece":
        bos = leading_special(tokenizer, enc.ids) if kind in ("bpe", "sentencepiece") else []
        ids = bos + list(enc.ids)  # (T,)
        tokens = [token_text(tokenizer, tokenizer.id_to_token(i)) for i in bos]
        tokens += [token_text(tokenizer, t) for t in enc.tokens]
        return Encoded(ids, tokens, [False] * len(tokens), [], left_out)
    word_ids = enc.word_ids  # each read of the property builds a new list (T,)
    pieces_per_word = Counter(word_ids)
    word_end = {w: end for w, (_, end) in zip(word_ids, enc.offsets, strict=True)}
    unknown, unknown_words, starts = [], [], []
    for i, (token, word, (start, end)) in enumerate(
        zip(enc.tokens, word_ids, enc.offsets, strict=True)
    ):
        is_unknown = token == UNK or pieces_per_word[word] > 1
        unknown.append(is_unknown)
        if is_unknown and (i == 0 or word_ids[i - 1] != word):  # a word's first token
            starts.append(i)
            unknown_words.append(text[start : word_end[word]] or text[start:end])
    return Encoded(list(enc.ids), list(enc.tokens), unknown, unknown_words, [], starts)


def decode(tokenizer: Tokenizer, ids: list[int]) -> str:
    """Token ids back to text (WordPiece pieces joined, punctuation spacing cleaned)."""
    return tokenizer.decode(ids, skip_special_tokens=False)


def sentence_text(tokenizer: Tokenizer, ids: list[int]) -> str:
    """The text of ids that :func:`encode` made (a sentence and, say, its continuation):
    :func:`decode` without the BOS ``encode`` put first, so the text encodes to ``ids``."""
    if tokenizer_kind(tokenizer) in ("bpe", "sentencepiece"):
        bos = leading_special(tokenizer, ids)
        if bos and list(ids[:1]) == bos:
            ids = ids[1:]
    return decode(tokenizer, ids)


def known_words(tokenizer: Tokenizer) -> list[str]:
    """Whole words of the vocabulary (no ``##`` pieces, no ``[UNK]``)."""
    return sorted(t for t in tokenizer.get_vocab() if not t.startswith("##") and t != UNK)
