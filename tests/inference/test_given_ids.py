"""A sentence given as token ids (#48 item 5): ``analyze(ids=...)`` keeps the ids as
they are, labels them as typed text labels its tokens (never U+FFFD), says where the
text tokenizes otherwise, and refuses an id the model has no row for."""

from __future__ import annotations

import pytest
from tokenizers import Tokenizer

from inference.analysis import analyze, sentence_key
from inference.given_ids import given_encoding, retokenized_notice
from inference.runtime import load_shipped
from models.tokenizer import decode, encode
from tests.helpers.gpt2_tokenizer import gpt2_style_tokenizer


def test_given_ids_are_analysed_as_they_are_and_the_notice_says_where_text_differs(
    exported_dir,
):
    """The piece ``##s`` after ``cat`` (as a generation can make it) reads back from its
    text as the word ``cats``: the analysis keeps the pieces and says so."""
    model = load_shipped(exported_dir, "softmax")
    vocab = model.tokenizer.get_vocab()
    pieces = [vocab["the"], vocab["cat"], vocab["##s"]]
    result = analyze(model, "the cats", recurrent=False, ids=pieces)
    assert result.ids == pieces and result.tokens == ["the", "cat", "##s"]
    assert result.outputs["attn"].shape[-1] == 3 and result.given_ids
    typed = analyze(model, "the cats", recurrent=False)
    assert typed.T == 2 and sentence_key(typed) != sentence_key(result)
    (notice,) = [n for n in result.notices if "as generated" in n]
    assert "2 tokens, other ids from position 1 on" in notice, notice
    same = analyze(model, "the cats", recurrent=False, ids=typed.ids)
    assert not [n for n in same.notices if "as generated" in n]  # nothing to say
    with pytest.raises(ValueError, match="outside the model's vocabulary"):
        analyze(model, "the cats", ids=[0, model.config.vocab_size])


def test_byte_tokens_of_a_split_character_are_labelled_without_replacement_characters():
    """A byte-level BPE continuation that cuts 東 between tokens: its text holds the whole
    character, each token's label its byte (as a typed sentence's tokens), no U+FFFD; a
    padded row's id is named. Letters a generation made one by one read back merged."""
    tok = Tokenizer.from_str(gpt2_style_tokenizer(300))
    ids = [b for b in encode(tok, "a").ids] + [
        tok.token_to_id(c)
        for c in ("æ", "Ŀ", "±")  # 東 = e6 9d b1, one byte a token
    ]
    text = decode(tok, ids)
    assert text == "a東"
    enc = given_encoding(tok, text, ids, vocab_size=320)
    assert enc.ids == ids and enc.tokens == ["a", "\\xe6", "\\x9d", "\\xb1"]
    assert not any("\ufffd" in t for t in enc.tokens)
    assert given_encoding(tok, text, [*ids, 310], vocab_size=320).tokens[-1] == "[id 310]"
    assert retokenized_notice(tok, text, ids) is None  # typed, the same bytes
    letters = [tok.token_to_id(c) for c in "the"]  # t, h, e: as a generation can make them
    merged = encode(tok, "the").ids
    assert len(merged) == 1  # typed, one merged token
    notice = retokenized_notice(tok, "the", letters)
    assert (
        "the 3 token ids as generated" in notice
        and "to 1 token, other ids from position 0 on" in notice
    )
