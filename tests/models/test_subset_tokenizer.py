"""SubsetTokenizer: the same tokens, ids, offsets and word ids as the full tokenizer."""

import json
import random
import string

import pytest

from models.bpe import bpe_tokenizer
from models.subset_tokenizer import SubsetTokenizer
from models.tokenizer import (
    ALPHABET,
    UNK,
    char_tokenizer,
    decode,
    encode,
    tokenizer_kind,
    wordpiece_tokenizer,
)
from tests.helpers.gpt2_tokenizer import EOT, TEXT, gpt2_style_tokenizer

TEXTS = [
    "",
    "   ",
    "The cat sat on the mat.",
    "unhappiness and happiness, unhappy cats didn't sit",
    "Café naïve ÉCOLE 東京 👍 x" + "z" * 80,
    "the<|endoftext|>cat <|endoftext|> sat<|endoftext|><|endoftext|>\n\n  on",
    "First Citizen:\nBefore we proceed any further, hear me speak.\n",
    "qqqq zzzz unhapp ##y [UNK] 123 4.5 $$$ ----- ''' \t\r\n",
]


def _random_texts(pieces: list[str], n: int = 40, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    chars = string.ascii_letters + string.punctuation + " \n\téü東👍"
    out = []
    for _ in range(n):
        words = [
            rng.choice(pieces) if rng.random() < 0.6 else "".join(rng.choices(chars, k=5))
            for _ in range(rng.randint(1, 12))
        ]
        out.append(rng.choice(["", " "]).join(words))
    return out


def _fields(enc) -> tuple:
    return enc.ids, enc.tokens, enc.offsets, enc.word_ids


def _agree(full, subset, texts: list[str]) -> None:
    for text in texts:
        try:
            a = full.encode(text)
        except Exception:  # a character the vocabulary lacks: models.tokenizer.encode drops it
            with pytest.raises(Exception, match="UNK"):
                subset.encode(text)
            a = None
        if a is not None:
            assert _fields(subset.encode(text)) == _fields(a)
        assert encode(subset, text) == encode(full, text)
        ids = encode(full, text).ids
        assert decode(subset, ids) == decode(full, ids)


def _wordpiece_vocab() -> dict[str, int]:
    words = ["un", "##happ", "##happi", "##ness", "##y", "##i", "happy", "the", "cat", "sat",
             "didn't", "cafe", "##at", "##s", "ecole"]  # fmt: skip
    pieces = [UNK, *ALPHABET, *("##" + c for c in ALPHABET), *words]
    return {t: 3 * i + 1 for i, t in enumerate(dict.fromkeys(pieces))}  # ids with gaps


@pytest.mark.parametrize("max_chars", [64, 6])
def test_wordpiece_per_text_matches_the_full_tokenizer(max_chars):
    vocab = _wordpiece_vocab()
    full = wordpiece_tokenizer(vocab, max_chars)
    subset = SubsetTokenizer("wordpiece", vocab, max_input_chars_per_word=max_chars)
    assert tokenizer_kind(subset) == "wordpiece"
    _agree(full, subset, TEXTS + _random_texts([t.strip("#") for t in vocab]))
    assert subset.id_to_token(vocab["cat"]) == "cat" and subset.token_to_id("cat") == vocab["cat"]


@pytest.mark.parametrize("add_prefix_space", [False, True])
def test_bpe_per_text_matches_the_full_tokenizer(add_prefix_space):
    model = json.loads(gpt2_style_tokenizer(600, legacy_merges=False))["model"]
    vocab, merges = model["vocab"], [tuple(m) for m in model["merges"]]
    full = bpe_tokenizer(vocab, merges, add_prefix_space, [EOT])
    subset = SubsetTokenizer("bpe", vocab, merges, add_prefix_space, [EOT])
    assert tokenizer_kind(subset) == "bpe"
    words = " ".join(TEXT).split() + [EOT]
    _agree(full, subset, TEXTS + _random_texts(words))
    assert subset.get_added_tokens_decoder() == full.get_added_tokens_decoder()


def test_bpe_merges_are_kept_in_their_order():
    """Two merges make "abc"; only the higher-priority one may apply, as in the full one."""
    vocab = {c: i for i, c in enumerate("abc")} | {"ab": 3, "bc": 4, "abc": 5}
    for merges in ([("a", "b"), ("b", "c"), ("ab", "c")], [("b", "c"), ("a", "b"), ("a", "bc")]):
        full = bpe_tokenizer(vocab, merges)
        subset = SubsetTokenizer("bpe", vocab, merges)
        _agree(full, subset, ["abc", "abcabc", "cab", "bca"])


def test_char_per_text_matches_the_full_tokenizer():
    stoi = {c: i for i, c in enumerate(sorted(set("".join(TEXTS))))}
    full, subset = char_tokenizer(stoi), SubsetTokenizer("char", stoi)
    assert tokenizer_kind(subset) == "char"
    _agree(full, subset, TEXTS + _random_texts(list(stoi)))
