"""Tokenizer: round trip, unknown words, empty input, non-ASCII."""

import pytest

from models.tokenizer import (
    UNK,
    build_tokenizer,
    closest_words,
    decode,
    encode,
    load_tokenizer,
    split_words,
)


@pytest.fixture(scope="module")
def tok():
    return build_tokenizer(["The cat sat on the mat .", "the animal didn't cross the street ."])


def test_known_words_are_single_tokens(tok):
    enc = encode(tok, "The cat sat on the mat.")
    assert enc.tokens == ["the", "cat", "sat", "on", "the", "mat", "."]
    assert not any(enc.unknown) and enc.unknown_words == []
    assert decode(tok, enc.ids) == "the cat sat on the mat."


def test_contraction_is_one_word(tok):
    assert encode(tok, "didn't").tokens == ["didn't"]


def test_unknown_word_becomes_pieces_and_is_reported(tok):
    enc = encode(tok, "the zebra sat")
    assert enc.tokens == ["the", "z", "##e", "##b", "##r", "##a", "sat"]
    assert enc.unknown == [False, True, True, True, True, True, False]
    assert enc.unknown_words == ["zebra"]
    assert decode(tok, enc.ids) == "the zebra sat"


@pytest.mark.parametrize("text", ["", "   ", "\n\t "])
def test_empty_and_whitespace_give_no_tokens(tok, text):
    enc = encode(tok, text)
    assert enc.ids == [] and enc.tokens == []


def test_non_ascii_and_emoji(tok):
    enc = encode(tok, "Café 😀 שלום cat")
    assert enc.tokens[:4] == ["c", "##a", "##f", "##e"]  # accents stripped
    assert UNK in enc.tokens
    assert enc.tokens[-1] == "cat" and not enc.unknown[-1]
    assert "😀" in enc.unknown_words and "Café" in enc.unknown_words


def test_control_characters_do_not_crash(tok):
    enc = encode(tok, "cat\x00\x07mat")
    assert len(enc.ids) >= 2


def test_split_words_matches_tokenizer(tok):
    assert split_words("The keys, didn't.") == ["the", "keys", ",", "didn't", "."]


def test_serialization_roundtrip(tok):
    again = load_tokenizer(tok.to_str())
    assert encode(again, "the cat zz").ids == encode(tok, "the cat zz").ids
    with pytest.raises(ValueError):
        load_tokenizer("{not json")


def test_closest_words(tok):
    assert closest_words(tok, "mats")[0] == "mat"


def test_max_words_caps_vocabulary():
    small = build_tokenizer(["a a a b b c"], max_words=2)
    assert "a" in small.get_vocab() and "b" in small.get_vocab()
    assert encode(small, "c").tokens == ["c"]  # single letters are always in the alphabet
