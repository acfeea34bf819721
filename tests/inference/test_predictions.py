"""TokenTexts: the text of every id, made as it is read, equal to id_to_token's list."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from inference.predictions import TokenTexts, id_to_token
from inference.runtime import load_graphs
from inference.text_input import visible
from models.subset_tokenizer import SubsetTokenizer
from tests.helpers.gpt2_tokenizer import EOT, gpt2_style_tokenizer


def _check(model) -> None:
    whole = [visible(t) for t in id_to_token(model)]
    texts = TokenTexts(model, visible)
    assert len(texts) == len(whole) and list(texts) == whole
    assert texts[-1] == whole[-1] and list(texts[3:9]) == whole[3:9] and texts[:5][4] == whole[4]
    with pytest.raises(IndexError):
        texts[len(whole)]


def test_a_shipped_model_s_token_texts_are_its_list(exported_dir):
    _check(load_graphs(exported_dir / "softmax.inspect.onnx"))


def test_a_large_byte_level_vocabulary_with_padded_rows():
    """A SubsetTokenizer (built per text) over GPT-2-style tokens, 20 padded rows more."""
    model = json.loads(gpt2_style_tokenizer(300, legacy_merges=False))["model"]
    tokenizer = SubsetTokenizer("bpe", model["vocab"], model["merges"], False, [EOT])
    padded = SimpleNamespace(tokenizer=tokenizer, config=SimpleNamespace(vocab_size=320))
    _check(padded)
    texts = TokenTexts(padded)
    assert texts[319] == "[id 319]" and texts[299] == EOT and " " in texts[:300]
