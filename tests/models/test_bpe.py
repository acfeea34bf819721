"""models/bpe.py: the SentencePiece-style and byte-level BPE builders, and how their tokens
read in the views (``token_text``, ``encode``'s tokens)."""

from __future__ import annotations

import pytest

from models.bpe import LLAMA3_PATTERN, QWEN2_PATTERN, sentencepiece_text
from models.tokenizer import encode, sentence_text, token_text, tokenizer_kind
from tests.helpers.llama_tokenizers import llama3_json, qwen2_json, sentencepiece_bpe_json
from upload.tokenizer_spec import build, spec_from_json


def _built(text: str):
    return build(spec_from_json(text, "tokenizer.json"))


def test_sentencepiece_tokens_read_as_the_text_they_stand_for():
    assert sentencepiece_text("▁the") == " the" and sentencepiece_text("▁▁") == "  "
    assert sentencepiece_text("<0x0A>") == "\n" and sentencepiece_text("<0x20>") == " "
    assert sentencepiece_text("<0xE6>") == "\\xe6"  # a third of 東: its byte, escaped
    assert sentencepiece_text("<s>") == "<s>" and sentencepiece_text("<0xZZ>") == "<0xZZ>"


@pytest.mark.parametrize("legacy", [True, False])
def test_the_views_show_a_llama_token_as_its_text_as_they_show_gpt2_s(legacy):
    """``encode``'s tokens (the views' labels): "▁the" as " the", as GPT-2's "Ġthe"; a
    character the vocabulary lacks as its bytes, as a byte-level tokenizer's; the BOS
    Llama's tokenizer puts first (what the model was fed) first."""
    tok = _built(sentencepiece_bpe_json(legacy=legacy))
    assert tokenizer_kind(tok) == "sentencepiece"
    enc = encode(tok, "the cat 東")
    assert enc.tokens[:5] == ["<s>", " the", " c", "at", " "]
    assert enc.tokens[5:] == ["\\xe6", "\\x9d", "\\xb1"]
    assert token_text(tok, tok.id_to_token(enc.ids[1])) == " the"
    assert sentence_text(tok, enc.ids) == "the cat 東"  # the first space is the decoder's to drop


@pytest.mark.parametrize("make", [qwen2_json, llama3_json])
def test_a_qwen2_or_llama3_token_reads_as_gpt2_s_do(make):
    tok = _built(make())
    assert tokenizer_kind(tok) == "bpe"
    tokens = encode(tok, "the cat").tokens  # Llama-3's BOS first, Qwen2's none
    assert tokens[-2:] == ["the", " cat"] and tokens[:-2] in ([], ["<|begin_of_text|>"])


def test_the_regexes_are_transformers_own():
    """The constants the files' regexes must equal, as transformers writes them."""
    from transformers.models.qwen2.tokenization_qwen2 import PRETOKENIZE_REGEX

    assert QWEN2_PATTERN == PRETOKENIZE_REGEX
    assert QWEN2_PATTERN.replace(r"\p{N}|", r"\p{N}{1,3}|") == LLAMA3_PATTERN


def test_llama3_takes_a_whole_word_entry_as_it_is():
    """ignore_merges: " zebra" is an entry no merge makes; Llama-3 takes it whole."""
    tok = _built(llama3_json())
    assert encode(tok, "a zebra").tokens == ["<|begin_of_text|>", "a", " zebra"]
    assert len(encode(tok, "a zebras").tokens) > 3
