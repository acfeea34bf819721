"""Word vocabularies of the translation task, built on the ``tokenizers`` library.

Both languages are written as words separated by spaces (the full stop is a word), so
a word-level tokenizer splits them exactly; ids 0-3 are the special tokens.
"""

from __future__ import annotations

from collections.abc import Iterable

from tokenizers import Tokenizer, models, pre_tokenizers

PAD, BOS, EOS, UNK = "<pad>", "<bos>", "<eos>", "<unk>"
SPECIALS = (PAD, BOS, EOS, UNK)
PAD_ID, BOS_ID, EOS_ID, UNK_ID = range(4)


def word_vocab(sentences: Iterable[Iterable[str]]) -> Tokenizer:
    """A word-level tokenizer over every word of ``sentences`` (sorted, after the four
    special tokens), splitting on whitespace; unknown words become ``<unk>``."""
    words = sorted({w for s in sentences for w in s} - set(SPECIALS))
    vocab = {t: i for i, t in enumerate([*SPECIALS, *words])}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token=UNK))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return tokenizer


def encode_words(tokenizer: Tokenizer, words: list[str], eos: bool = True) -> list[int]:
    """Ids of ``words`` (one id per word; ``<unk>`` for a word the vocabulary lacks),
    followed by ``<eos>`` when ``eos``."""
    vocab = tokenizer.get_vocab()
    return [vocab.get(w, UNK_ID) for w in words] + ([EOS_ID] if eos else [])
