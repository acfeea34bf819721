"""Word-level tokenizer with character fallback, built on the ``tokenizers`` library.

Known words are single tokens. An unknown word is split into WordPiece
character pieces (``c ##a ##t``) and reported as unknown; a character that is
not in the alphabet at all (emoji, a rare script) becomes ``[UNK]``. Text is
NFKD-normalized, accents are stripped and everything is lowercased, so
"Café" and "cafe" are the same word. The tokenizer is one JSON file
(``exported/tokenizer.json``) and is also stored in checkpoint metadata.
"""

from __future__ import annotations

import difflib
import string
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers

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


def split_words(text: str) -> list[str]:
    """Normalize and pre-tokenize ``text`` into words exactly as the tokenizer does."""
    probe = _pipeline(Tokenizer(models.WordPiece({UNK: 0}, unk_token=UNK)))
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
    and newlines too, is a token.

    ``[UNK]`` gets id ``len(stoi)``: characters outside the vocabulary (emoji, ...)
    become ``[UNK]``, which :func:`encode` reports as unknown. Decoding fuses the
    characters back together without spaces.
    """
    vocab = {**stoi, UNK: len(stoi)}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token=UNK))
    tokenizer.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    tokenizer.decoder = decoders.Fuse()
    return tokenizer


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

    ``ids`` and ``tokens`` have one entry per token; ``unknown[i]`` is True
    when token i belongs to a word that is not a single vocabulary entry;
    ``unknown_words`` lists those words (original spelling, in order).
    """

    ids: list[int]
    tokens: list[str]
    unknown: list[bool]
    unknown_words: list[str]


def encode(tokenizer: Tokenizer, text: str) -> Encoded:
    """Tokenize any string. Empty or whitespace-only text gives zero tokens."""
    enc = tokenizer.encode(text, add_special_tokens=False)
    pieces_per_word = Counter(enc.word_ids)
    unknown, unknown_words, seen = [], [], set()
    for token, word, (start, end) in zip(enc.tokens, enc.word_ids, enc.offsets, strict=True):
        is_unknown = token == UNK or pieces_per_word[word] > 1
        unknown.append(is_unknown)
        if is_unknown and word not in seen:
            seen.add(word)
            spans = [o for o, w in zip(enc.offsets, enc.word_ids, strict=True) if w == word]
            unknown_words.append(text[spans[0][0] : spans[-1][1]] or text[start:end])
    return Encoded(list(enc.ids), list(enc.tokens), unknown, unknown_words)


def decode(tokenizer: Tokenizer, ids: list[int]) -> str:
    """Token ids back to text (WordPiece pieces joined, punctuation spacing cleaned)."""
    return tokenizer.decode(ids, skip_special_tokens=False)


def known_words(tokenizer: Tokenizer) -> list[str]:
    """Whole words of the vocabulary (no ``##`` pieces, no ``[UNK]``)."""
    return sorted(t for t in tokenizer.get_vocab() if not t.startswith("##") and t != UNK)


def closest_words(tokenizer: Tokenizer, word: str, n: int = 3) -> list[str]:
    """Up to ``n`` known words closest to ``word`` by ``difflib`` similarity."""
    key = split_words(word)
    target = "".join(key) if key else word.lower()
    return difflib.get_close_matches(target, known_words(tokenizer), n=n, cutoff=0.6)
