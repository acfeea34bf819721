"""The Llama-era BPE tokenizer files (Llama 1/2, Mistral, TinyLlama, Qwen2, Llama-3, GPT-NeoX)
as specs: our rebuilt tokenizer gives exactly the ids the tokenizers library gives reading the
whole file, and a file whose pipeline is not one of ours is refused in one line naming the
part."""

from __future__ import annotations

import json
import unicodedata

import pytest
from tokenizers import Tokenizer

from models.bpe import build_bpe
from models.subset_tokenizer import SUBSET_FROM, SubsetTokenizer
from models.tokenizer import decode, encode, sentence_text, tokenizer_kind
from tests.helpers.gpt2_tokenizer import gpt2_style_tokenizer
from tests.helpers.llama_tokenizers import (
    gpt_neox_json,
    llama3_json,
    qwen2_json,
    sentencepiece_bpe_json,
)
from upload.errors import UploadError
from upload.spec_checks import check_spec
from upload.spec_wire import from_wire, to_wire
from upload.tokenizer_spec import build, spec_from_json

TEXTS = [
    "Hello world",
    "the cat sat on the mat.",
    " leading space",
    "trailing space ",
    "  two  spaces   three",
    "line one\nline two\n\nafter a blank\r\nwindows\ttab",
    "12345 and 3.14159, 2024",
    "naïve café",
    "e\u0301 cafe\u0301 (combining accents: NFC composes them)",
    "東京 👍 🤗 emoji and CJK",
    "I'll DON'T they're we'd it's THE'S",
    "<s>hi</s> <|endoftext|>x<|im_start|>y<|begin_of_text|> z",
    "zebra  zebra",
    "",
    "   ",
    "\n",
]
FORMS = {
    "llama legacy": (lambda: sentencepiece_bpe_json(legacy=True), 400),
    "llama metaspace": (lambda: sentencepiece_bpe_json(legacy=False), 400),
    "metaspace decoder": (lambda: sentencepiece_bpe_json(legacy=False, decoder="metaspace"), 400),
    "bos and eos": (lambda: sentencepiece_bpe_json(legacy=True, eos=True), 400),
    "qwen2": (qwen2_json, 400),
    "llama3": (llama3_json, 400),
    "gpt-neox": (gpt_neox_json, 400),
    "gpt2": (gpt2_style_tokenizer, 300),
}
NAME = "tiny/tokenizer.json"


def _spec(form: str) -> tuple[str, dict]:
    make, size = FORMS[form]
    text = make()
    return text, check_spec(spec_from_json(text, NAME), size, NAME)


@pytest.mark.parametrize("form", FORMS)
def test_our_tokenizer_gives_the_library_s_ids_for_the_whole_file(form):
    text, spec = _spec(form)
    reference, ours = Tokenizer.from_str(text), build(spec)
    for t in TEXTS:
        ids, full = reference.encode(t, add_special_tokens=False).ids, reference.encode(t).ids
        bos = full[:1] if ids and full[1 : len(ids) + 1] == ids else []  # the post-processor's BOS
        assert encode(ours, t).ids == bos + ids, (form, t)
        assert ours.encode(t).ids == reference.encode(t).ids, (form, t)  # BOS / EOS too
        assert decode(ours, ids) == reference.decode(ids, skip_special_tokens=False), (form, t)


@pytest.mark.parametrize("form", ["llama legacy", "llama metaspace", "qwen2", "llama3", "gpt-neox"])
def test_decoding_gives_the_text_back(form):
    """Every byte has a token (byte fallback or byte-level): any text comes back, but for
    Metaspace's first space (prepend_scheme "first" takes a leading space as its mark) and
    the legacy normalizer's "▁" after an added token (Llama's known quirk)."""
    _, spec = _spec(form)
    ours = build(spec)
    for t in TEXTS:
        back = sentence_text(ours, encode(ours, t).ids)  # encode's BOS left out
        expected = unicodedata.normalize("NFC", t) if spec.get("nfc") else t
        if spec.get("pipeline") == "legacy" and "</s>" in t:
            expected = t.replace("<s>", "<s> ").replace("</s> ", "</s>  ")
        if spec.get("pipeline") == "metaspace" and t.startswith(" "):
            expected = t[1:]
        assert back == expected, (form, t)


def test_each_family_s_spec_names_its_pipeline():
    fields = ("kind", "pre", "nfc", "ignore_merges", "bos", "eos", "pipeline", "decoder")
    got = {form: {k: _spec(form)[1].get(k) for k in fields} for form in FORMS}
    sp = dict(kind="sentencepiece", pre=None, nfc=None, ignore_merges=False, bos="<s>", eos=None)
    assert got["llama legacy"] == {**sp, "pipeline": "legacy", "decoder": "fallback"}
    assert got["llama metaspace"] == {**sp, "pipeline": "metaspace", "decoder": "fallback"}
    assert got["metaspace decoder"] == {**sp, "pipeline": "metaspace", "decoder": "metaspace"}
    assert got["bos and eos"]["eos"] == "</s>"
    byte_level = dict(kind="bpe", ignore_merges=False, bos=None, eos=None, pipeline=None)
    byte_level["decoder"] = None
    assert got["qwen2"] == {**byte_level, "pre": "qwen2", "nfc": True}
    bos = "<|begin_of_text|>"
    assert got["llama3"] == {
        **byte_level,
        "pre": "llama3",
        "nfc": False,
        "ignore_merges": True,
        "bos": bos,
    }
    assert got["gpt-neox"] == {**byte_level, "pre": "gpt2", "nfc": True}
    assert got["gpt2"] == {**byte_level, "pre": "gpt2", "nfc": False}
    _, spec = _spec("llama legacy")
    assert spec["unk"] == "<unk>" and spec["byte_fallback"] and spec["fuse_unk"]
    assert spec["special"] == ["<unk>", "<s>", "</s>"] and spec["vocab"]["<0x0A>"] == 13
    _, spec = _spec("qwen2")  # Qwen2's special tokens are only in added_tokens: now in vocab
    assert [spec["vocab"][t] for t in spec["special"]] == [397, 398, 399]
    _, spec = _spec("gpt-neox")  # runs of spaces matched after NFC, as the file says
    assert spec["normalized"] == ["    ", "   ", "  "]


@pytest.mark.parametrize("form", FORMS)
def test_our_tokenizer_s_own_json_reads_back_as_the_same_spec(form):
    """The export writes our tokenizer into the graphs' metadata; uploaded again, it is
    read as the spec it was built from, and the spec crosses the worker's pipe intact."""
    _, spec = _spec(form)
    again = spec_from_json(build(spec).to_str(), NAME)
    assert json.loads(json.dumps(again)) == json.loads(json.dumps(spec))
    wired = from_wire(to_wire(spec))
    assert encode(build(wired), TEXTS[9]).ids == encode(build(spec), TEXTS[9]).ids


@pytest.mark.parametrize("form", ["llama legacy", "llama metaspace", "qwen2", "llama3", "gpt-neox"])
def test_a_large_vocabulary_built_per_text_gives_the_full_tokenizer_s_ids(form):
    """From SUBSET_FROM entries the server builds a tokenizer per text (issue #25): the
    byte tokens, the unknown token, the regex, NFC and ignore_merges go with it."""
    _, spec = _spec(form)
    n = len(spec["vocab"])
    spec["vocab"].update({f"<filler {i}>": n + i for i in range(SUBSET_FROM)})
    subset = build(spec)
    assert isinstance(subset, SubsetTokenizer)
    assert tokenizer_kind(subset) == spec["kind"]
    settings = {k: v for k, v in spec.items() if k not in ("kind", "vocab", "merges")}
    full = build_bpe(spec["kind"], spec["vocab"], spec["merges"], settings)
    for t in [*TEXTS, "the</s>the <s> the", "<|begin_of_text|>the<|eot_id|> cat"]:
        for special in (False, True):
            a, b = subset.encode(t, special), full.encode(t, add_special_tokens=special)
            assert (a.ids, a.tokens, a.offsets) == (b.ids, b.tokens, b.offsets), (form, t)
        assert decode(subset, b.ids) == decode(full, b.ids)


def _regex(data: dict) -> dict:
    return data["pre_tokenizer"]["pretokenizers"][0]["pattern"]


REFUSED = {
    "another regex": ("qwen2", lambda d: _regex(d).update(Regex=r"\p{N}+|\s+"), "pre_tokenizer"),
    "digits grouped": (
        "llama3",
        lambda d: _regex(d).update(Regex=_regex(d)["Regex"].replace("{1,3}", "{1,4}")),
        "pre_tokenizer",
    ),
    "regex in byte-level": (
        "qwen2",
        lambda d: d["pre_tokenizer"]["pretokenizers"][1].update(use_regex=True),
        "pre_tokenizer",
    ),
    "split removed": (
        "llama3",
        lambda d: d["pre_tokenizer"]["pretokenizers"].pop(1),
        "pre_tokenizer",
    ),
    "NFKC": ("qwen2", lambda d: d.update(normalizer={"type": "NFKC"}), "normalizer"),
    "lowercase": (
        "llama legacy",
        lambda d: d["normalizer"]["normalizers"].append({"type": "Lowercase"}),
        "normalizer",
    ),
    "prepend always": (
        "llama metaspace",
        lambda d: d["pre_tokenizer"].update(prepend_scheme="always"),
        "pre_tokenizer",
    ),
    "legacy and metaspace": (
        "llama legacy",
        lambda d: d.update(
            pre_tokenizer=json.loads(sentencepiece_bpe_json(False))["pre_tokenizer"]
        ),
        "pre_tokenizer",
    ),
    "no strip": ("llama legacy", lambda d: d["decoder"]["decoders"].pop(), "decoder"),
    "byte fallback": ("qwen2", lambda d: d["model"].update(byte_fallback=True), "model"),
    "dropout": ("llama legacy", lambda d: d["model"].update(dropout=0.1), "model"),
    "template": (
        "llama legacy",
        lambda d: d["post_processor"]["single"].append(d["post_processor"]["single"][1]),
        "post_processor",
    ),
    "template id": (
        "llama legacy",
        lambda d: d["post_processor"]["special_tokens"]["<s>"].update(ids=[2]),
        "post_processor",
    ),
    "lstrip": ("llama3", lambda d: d["added_tokens"][0].update(lstrip=True), "added_tokens"),
    "gpt2 metaspace": (
        "gpt2",
        lambda d: d.update(pre_tokenizer={"type": "Metaspace", "replacement": "▁"}),
        "pre_tokenizer",
    ),
}


@pytest.mark.parametrize("case", REFUSED)
def test_a_pipeline_not_ours_is_refused_in_one_line_naming_the_part(case):
    form, change, part = REFUSED[case]
    data = json.loads(FORMS[form][0]())
    change(data)
    with pytest.raises(UploadError) as refused:
        spec_from_json(json.dumps(data), NAME)
    message = str(refused.value)
    assert message.startswith(f"{NAME}: refused: its tokenizer is not one this app builds")
    assert f"({part}:" in message and "\n" not in message


def test_an_added_token_keeps_the_vocabulary_s_id_and_a_taken_id_is_refused():
    """A file whose added_tokens id differs from its vocabulary's (the library encodes the
    vocabulary's: 50,256 here, not 337) reads as the library reads it."""
    text = gpt2_style_tokenizer(50257)
    assert json.loads(text)["added_tokens"][0]["id"] == 337
    ours = build(spec_from_json(text, NAME))
    assert (
        encode(ours, "a <|endoftext|>").ids
        == Tokenizer.from_str(text).encode("a <|endoftext|>").ids
    )
    assert encode(ours, "a <|endoftext|>").ids[-1] == 50256
    data = json.loads(qwen2_json())
    data["added_tokens"][0]["id"] = 7  # another token's id
    with pytest.raises(UploadError, match="takes another's id"):
        spec_from_json(json.dumps(data), NAME)


def test_a_spec_s_settings_are_checked_on_the_server_side():
    _, spec = _spec("llama legacy")
    for field, value in [
        ("pipeline", "mine"),
        ("decoder", None),
        ("unk", "<nope>"),
        ("byte_fallback", "yes"),
        ("bos", "<nope>"),
        ("special", ["<nope>"]),
    ]:
        with pytest.raises(UploadError, match="settings are out of range"):
            check_spec({**spec, field: value}, 400, NAME)
    _, spec = _spec("qwen2")
    for field, value in [("pre", "mine"), ("nfc", 1), ("normalized", "  ")]:
        with pytest.raises(UploadError, match="settings are out of range"):
            check_spec({**spec, field: value}, 400, NAME)


def _special_id_a_list(d: dict) -> None:
    d["post_processor"]["single"][0]["SpecialToken"]["id"] = ["<s>"]


@pytest.mark.parametrize(
    "form, change",
    [
        ("qwen2", lambda d: d["model"].update(type={"BPE": 1})),
        ("qwen2", lambda d: d.update(pre_tokenizer="Split")),
        ("qwen2", lambda d: d["pre_tokenizer"]["pretokenizers"].__setitem__(0, [1])),
        ("llama legacy", _special_id_a_list),
        (
            "llama3",
            lambda d: d.update(
                post_processor={"type": "Sequence", "processors": [d["post_processor"]]}
            ),
        ),
        ("llama legacy", lambda d: d["added_tokens"].append({"content": ["x"], "id": 5})),
        ("gpt2", lambda d: d["model"]["vocab"].update({"#": "x"})),
    ],
)
def test_a_part_of_the_wrong_shape_is_refused_not_a_crash(form, change):
    """Worker side, then the pipe and the server's checks: every odd value ends in an
    UploadError (one line), never another exception."""
    data = json.loads(FORMS[form][0]())
    change(data)
    with pytest.raises(UploadError):
        spec = spec_from_json(json.dumps(data), NAME)
        check_spec(from_wire(json.loads(json.dumps(to_wire(spec)))), FORMS[form][1], NAME)


@pytest.mark.parametrize("make", [lambda: sentencepiece_bpe_json(True), llama3_json, qwen2_json])
def test_the_app_encodes_as_the_model_was_fed_bos_first(make):
    """Llama's and Llama-3's post-processor puts a BOS first (Qwen2's none): the app's
    ids are the library's with add_special_tokens (what transformers gives the model), and
    decoding them gives back a text that encodes to the same ids."""
    text = "the cat sat  naïve ✓"
    ours = build(spec_from_json(make(), "t.json"))
    ids = encode(ours, text).ids
    assert ids == Tokenizer.from_str(make()).encode(text).ids
    assert encode(ours, sentence_text(ours, ids)).ids == ids
