"""The generation panel's token texts (#44 item 21): a byte-level BPE token that ends
inside a UTF-8 character is shown neither as U+FFFD nor as loose bytes; the character
goes with the token that completes it."""

from __future__ import annotations

from tokenizers import Tokenizer

from models.tokenizer import decode, token_text
from tests.helpers.charts import plotly_charts
from tests.helpers.gpt2_tokenizer import gpt2_style_tokenizer
from ui import loaders, sentence_ids
from ui.generation import PARTIAL, new_token_texts


def _bytes_tokenizer() -> Tokenizer:
    return Tokenizer.from_str(gpt2_style_tokenizer(vocab_size=257))  # bytes alone, no merges


def test_a_character_split_over_tokens_is_shown_with_the_token_that_completes_it():
    tok = _bytes_tokenizer()
    ids = tok.encode("a東京👍").ids
    assert len(ids) == 1 + 3 + 3 + 4  # one token per byte
    old = [token_text(tok, tok.id_to_token(t)) for t in ids]  # what the panel showed
    assert old[1:4] == ["\\xe6", "\\x9d", "\\xb1"]  # 東's three bytes, none of them 東
    texts = new_token_texts(tok, ids)
    assert "\ufffd" not in "".join(texts)
    assert texts == ["a", PARTIAL, PARTIAL, "東", PARTIAL, PARTIAL, "京", *[PARTIAL] * 3, "👍"]
    assert "".join(t for t in texts if t != PARTIAL) == decode(tok, ids)


def test_a_partial_character_at_the_end_keeps_its_replacement_character():
    """Generation stopped inside a character: the last token shows what decoding gives."""
    tok = _bytes_tokenizer()
    ids = tok.encode("東").ids[:2]
    assert new_token_texts(tok, ids) == [PARTIAL, "\ufffd"]


def test_word_level_tokens_are_shown_as_they_are():
    tok = loaders.get_model("softmax").tokenizer
    ids = tok.encode("the cat sat", add_special_tokens=False).ids
    assert new_token_texts(tok, ids) == ["the", "cat", "sat"]


def test_use_as_the_sentence_keeps_the_generated_ids_until_another_sentence_is_typed():
    """After Generate, "Use as the sentence" makes the text the sentence and every view
    analyses the ids as generated (kept for this model and text); typing another sentence
    lets them go."""
    from tests.ui.test_app import new_app

    at = new_app(model="softmax", view="predict", text="the cat")
    at.button(key="generate").click().run()
    text, ids = at.session_state["generated"][1], at.session_state["generated"][6]
    at.button(key="use_gen").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.text_area(key="text").value == text
    assert at.session_state[sentence_ids.KEY] == ("softmax", text, ids)
    at.segmented_control(key="view").set_value("attention").run()
    assert len(plotly_charts(at)[0].spec["data"][0]["x"]) == len(ids)  # T + 10 tokens
    at.text_area(key="text").set_value("the dog").run()
    assert sentence_ids.KEY not in at.session_state


def test_a_sentencepiece_token_keeps_its_space_and_its_bytes_make_one_character():
    """Llama's tokens: the first new token's "▁" is its space (decoding would drop it), and
    the byte tokens of a character the vocabulary lacks show it with the last of them."""
    from tests.helpers.llama_tokenizers import sentencepiece_bpe_json
    from upload.tokenizer_spec import build, spec_from_json

    tok = build(spec_from_json(sentencepiece_bpe_json(), "tokenizer.json"))
    ids = tok.encode("the cat 東", add_special_tokens=False).ids
    assert new_token_texts(tok, ids) == [" the", " c", "at", " ", PARTIAL, PARTIAL, "東"]
