"""Tokenizer files as plain data: which tokenizer JSONs are accepted, and token rows that
must match the tokenizer (both numbers when they do not)."""

from __future__ import annotations

import json

import pytest

from models.subset_tokenizer import SUBSET_FROM, SubsetTokenizer
from models.tokenizer import ALPHABET, UNK, encode, load_tokenizer, vocab_of
from models.word_index import WordIndex, index_words, word_index
from tests.helpers.gpt2_tokenizer import gpt2_style_tokenizer
from upload.errors import UploadError
from upload.spec_checks import check_spec
from upload.spec_wire import from_wire, to_wire
from upload.token_rows import check_rows, padding_rows, vocab_note
from upload.tokenizer_spec import build, for_export, spec_from_json


def refused(match: str):
    return pytest.raises(UploadError, match=match)


def test_a_gpt2_style_tokenizer_json_gives_a_bpe_spec():
    spec = spec_from_json(gpt2_style_tokenizer(), "tokenizer.json")
    assert spec["kind"] == "bpe" and len(spec["vocab"]) == 300
    assert spec["special"] == ["<|endoftext|>"] and spec["add_prefix_space"] is False
    assert all(isinstance(m, list) and len(m) == 2 for m in spec["merges"])
    assert check_spec(spec, 300, "tokenizer.json") is spec


@pytest.mark.parametrize(
    "spec",
    [
        {"kind": "char", "stoi": {"\n": 0, " ": 1, "a": 2, "é": 3}},
        {
            "kind": "wordpiece",
            "vocab": {UNK: 0, "a": 1, "##b": 2, "cat": 7},
            "max_input_chars_per_word": 64,
        },
        "bpe",
    ],
)
def test_a_built_tokenizer_s_vocabulary_is_its_spec_s_and_the_library_s(spec):
    if spec == "bpe":
        spec = spec_from_json(gpt2_style_tokenizer(), "tokenizer.json")
    tokenizer = build(spec)
    vocab = spec["stoi"] if spec["kind"] == "char" else spec["vocab"]
    assert vocab_of(tokenizer) is vocab  # not read back from the library (issue #25)
    assert vocab_of(tokenizer) == tokenizer.get_vocab()


@pytest.mark.parametrize("kind", ["wordpiece", "bpe", "char"])
def test_a_large_vocabulary_is_built_per_text_and_its_json_is_the_full_tokenizer(kind):
    """From SUBSET_FROM entries the server never builds the library's tokenizer (it holds
    the GIL 0.2-0.8 s for 262,144 entries); the export's worker writes the full one."""
    if kind == "bpe":
        spec = spec_from_json(gpt2_style_tokenizer(), "tokenizer.json")
        spec["vocab"].update({f"Ġw{i}": len(spec["vocab"]) + i for i in range(SUBSET_FROM)})
    elif kind == "char":
        spec = {"kind": "char", "stoi": {chr(0x4E00 + i): i for i in range(SUBSET_FROM)}}
    else:
        words = [UNK, *ALPHABET, *(f"w{i}" for i in range(SUBSET_FROM))]
        spec = {"kind": kind, "vocab": {w: i for i, w in enumerate(words)}}
        spec["max_input_chars_per_word"] = 64
    tokenizer = build(spec)
    assert isinstance(tokenizer, SubsetTokenizer)
    full = load_tokenizer(tokenizer.to_str())
    text = "First Citizen: w17 w16383 東京 w99999 w3\n"
    text = text if kind != "char" else "一丁七"
    assert encode(tokenizer, text) == encode(full, text)
    assert vocab_of(tokenizer) is (spec["stoi"] if kind == "char" else spec["vocab"])


def test_the_worker_s_word_index_gives_the_server_s_suggestions_and_is_checked():
    """The worker orders the whole words (upload.spec_wire.to_wire); the server uses that
    order as its suggestion index, after checking it is words of the vocabulary by length."""
    words = [UNK, *ALPHABET, "##s", "mat", "cat", "mats", "elephant", *(f"w{i}" for i in range(50))]
    spec = {"kind": "wordpiece", "vocab": {w: i for i, w in enumerate(words)}}
    spec["max_input_chars_per_word"] = 64
    sent = from_wire(to_wire(spec))
    assert sent["word_index"] == index_words(spec["vocab"])
    tokenizer = build(check_spec(sent, len(words), "vocab.json"))
    assert word_index(tokenizer).words is sent["word_index"]
    assert word_index(tokenizer).closest("matz") == WordIndex.of(build(spec)).closest("matz")
    assert word_index(tokenizer).closest("matz") == ["mat", "mats"]
    assert "word_index" not in for_export(sent) and for_export(sent)["vocab"] is sent["vocab"]
    for bad in (
        [*sent["word_index"], "dog"],  # not a vocabulary word
        sent["word_index"][::-1],  # not by length
        [1, *sent["word_index"][1:]],  # not a string
        "mat",  # not a list
    ):
        with refused("vocab.json: the tokenizer's word index is not words of its vocabulary"):
            check_spec({**sent, "word_index": bad}, len(words), "vocab.json")


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.update(normalizer={"type": "Lowercase"}),
        lambda d: d.update(pre_tokenizer={"type": "Metaspace", "replacement": "▁"}),
        lambda d: d["pre_tokenizer"].update(use_regex=False),
        lambda d: d.update(decoder={"type": "Fuse"}),
        lambda d: d["model"].update(dropout=0.1),
        lambda d: d["model"].update(continuing_subword_prefix="##"),
        lambda d: d["model"].update(byte_fallback=True),
    ],
)
def test_a_bpe_tokenizer_with_another_pipeline_is_refused(change):
    data = json.loads(gpt2_style_tokenizer())
    change(data)
    with refused("tokenizer.json: refused: its tokenizer is not one this app builds"):
        spec_from_json(json.dumps(data), "tokenizer.json")


def test_merges_must_join_vocabulary_tokens():
    spec = spec_from_json(gpt2_style_tokenizer(), "tokenizer.json")
    spec["merges"].append(["zz", "q"])
    with refused("the BPE merge .'zz', 'q'. joins tokens the vocabulary lacks"):
        check_spec(spec, 300, "tokenizer.json")
    data = json.loads(gpt2_style_tokenizer())
    data["model"]["merges"].append("a b c")
    with refused("a BPE merge is not a pair of tokens"):
        spec_from_json(json.dumps(data), "tokenizer.json")


def test_token_rows_match_the_tokenizer_or_are_its_padding():
    assert padding_rows(50257, 50257) == 0 and padding_rows(50257, 50304) == 47
    assert padding_rows(65, 128) == 63  # the next multiple of 64
    assert padding_rows(65, 192) is None and padding_rows(65, 50304) is None
    assert padding_rows(151646, 151936) == 290  # Qwen2: a multiple of 128, 0.2 % more
    assert padding_rows(151646, 160000) is None  # 5 % more: another model's rows
    check_rows(50257, 50256, 50304, "ckpt.pt")  # nanoGPT's padded GPT-2 vocabulary
    with refused(
        r"ckpt.pt: the tokenizer has 65 tokens \(largest id 64\) but the model has 50,304 "
        "token rows"
    ):
        check_rows(65, 64, 50304, "ckpt.pt")
    with refused("the tokenizer has 300 tokens .largest id 299. but the model has 200 token"):
        check_rows(300, 299, 200, "ckpt.pt")
    spec = {"kind": "char", "stoi": {chr(97 + i): i for i in range(10)}}
    assert vocab_note(spec, 10) is None
    assert "the last 54 are padding" in vocab_note(spec, 64)
