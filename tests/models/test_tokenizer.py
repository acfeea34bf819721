"""Tokenizer: round trip, unknown words, empty input, non-ASCII."""

import pytest

from models.tokenizer import (
    UNK,
    build_tokenizer,
    decode,
    encode,
    load_tokenizer,
    split_words,
)
from models.word_index import closest_words


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


# --- character and byte-level BPE vocabularies ------------------------------------------


def test_a_character_vocabulary_leaves_out_what_it_lacks_and_adds_no_unk():
    from models.tokenizer import char_tokenizer

    stoi = {ch: i for i, ch in enumerate("\n :ABEIMOR")}
    tok = char_tokenizer(stoi)
    assert tok.get_vocab() == stoi  # exactly the model's rows: no [UNK]
    enc = encode(tok, "ROMEO:\nAbé 👍")
    assert enc.tokens == list("ROMEO:\nA ") and enc.ids == [stoi[c] for c in "ROMEO:\nA "]
    assert enc.left_out == ["b", "é", "👍"] and not any(enc.unknown)
    assert decode(tok, enc.ids) == "ROMEO:\nA "


TEXTS = [
    "the cat sat on the mat.",
    "First Citizen:\n\nBefore we proceed",
    "  leading spaces and\ttabs\r\n",
    "café naïve 東京 👍 <|endoftext|> more",
    "",
    "x" * 300,
]


@pytest.mark.parametrize("legacy", [True, False])
def test_our_bpe_tokenizer_encodes_as_the_library_reads_the_same_file(legacy):
    """Our builder from the spec (GPT-2's regex, the file's vocabulary and merges) gives the
    ids the tokenizers library gives when it reads the whole tokenizer.json itself."""
    from tokenizers import Tokenizer

    from tests.helpers.gpt2_tokenizer import gpt2_style_tokenizer
    from upload.spec_checks import check_spec
    from upload.tokenizer_spec import build, spec_from_json

    text = gpt2_style_tokenizer(legacy_merges=legacy)
    reference = Tokenizer.from_str(text)
    ours = build(check_spec(spec_from_json(text, "tokenizer.json"), 300, "tokenizer.json"))
    for t in TEXTS:
        enc = encode(ours, t)
        assert enc.ids == reference.encode(t, add_special_tokens=False).ids, t
        assert decode(ours, enc.ids) == t and not any(enc.unknown)
        if t.isascii():  # every token is whole characters: the tokens spell the text
            assert "".join(enc.tokens) == t


def test_byte_level_tokens_read_as_the_text_they_stand_for():
    from models.tokenizer import byte_level_text

    assert byte_level_text("Ġthe") == " the"
    assert byte_level_text("Ċ") == "\n" and byte_level_text("ĉ") == "\t"
    assert byte_level_text("Ã©") == "é"  # two bytes, one character
    assert byte_level_text("Ã") == "\\xc3"  # half a character: its byte, escaped
    assert byte_level_text("<|endoftext|>") == "<|endoftext|>"


def test_vocab_of_reads_a_tokenizers_vocabulary_once():
    """``vocab_of``: the tokenizer's own vocabulary, read once and kept per tokenizer (a
    262,144-word vocabulary's ``get_vocab()`` holds the GIL 0.36 s); another tokenizer's
    is its own."""
    from models.tokenizer import build_tokenizer, vocab_of

    one, two = build_tokenizer(["the cat sat"]), build_tokenizer(["a dog ran"])
    assert vocab_of(one) == one.get_vocab() and vocab_of(one) is vocab_of(one)
    assert vocab_of(two) == two.get_vocab() and vocab_of(two) != vocab_of(one)
