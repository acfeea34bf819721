"""Tokenizers as plain data: read from a user's file in the worker, rebuilt by our code.

A tokenizer JSON can carry a user's regex (catastrophic backtracking holds the GIL for
minutes; some regexes make the Rust library panic), a padding length of millions, and
any normalizer or decoder. None of that reaches the server. The worker keeps only what
our own builders need, as a *spec*:

* ``{"kind": "wordpiece", "vocab": {token: id}, "max_input_chars_per_word": n}``: this
  project's word-level tokenizer (``models.tokenizer.wordpiece_tokenizer``), accepted
  only when the file's normalizer, pre-tokenizer, post-processor, decoder, padding and
  truncation are exactly ours;
* ``{"kind": "char", "stoi": {character: id}}``: a character vocabulary (nanoGPT's
  ``meta.pkl``; ``models.tokenizer.char_tokenizer``);
* ``{"kind": "bpe", "vocab": {token: id}, "merges": [[a, b], ...], "add_prefix_space":
  bool, "special": [token, ...], "pre": "gpt2" | "qwen2" | "llama3", "nfc": bool,
  "ignore_merges": bool, "bos": token | None, "eos": token | None}``: byte-level BPE
  (GPT-2's, GPT-NeoX's, Qwen2's and Llama-3's published ``tokenizer.json``;
  ``models.bpe.bpe_tokenizer``); the pre-tokenizer regex is one of our constants, matched
  by exact equality with the file's, never the file's. ``special`` are its added tokens
  (``<|endoftext|>``), each a vocabulary entry, matched in a text as literal strings;
* ``{"kind": "sentencepiece", "vocab", "merges", "unk", "byte_fallback", "fuse_unk",
  "ignore_merges", "pipeline": "legacy" | "metaspace", "decoder": "fallback" |
  "metaspace", "special", "bos", "eos"}``: SentencePiece-style BPE as Llama 1/2, Mistral
  and TinyLlama ship it (``models.bpe.sentencepiece_tokenizer``).

``upload/bpe_spec.py`` reads both BPE families and names the part of a file it refuses.

A model's token rows must match its tokenizer (``upload.token_rows.check_rows``): as many rows as
tokens, or a padded vocabulary (nanoGPT rounds 50,257 up to 50,304, a multiple of 64)
whose extra rows no text maps to.

The server checks the spec against explicit limits (``upload.spec_checks.check_spec``) and
builds the tokenizer with our code (:func:`build`): every regex that runs in the server is
ours.
"""

from __future__ import annotations

import json

from tokenizers import Tokenizer

from models.bpe import BPE_SETTINGS, SENTENCEPIECE_SETTINGS, build_bpe
from models.subset_tokenizer import SUBSET_FROM, SubsetTokenizer
from models.tokenizer import UNK, char_tokenizer, vocab_of, wordpiece_tokenizer
from models.word_index import WordIndex, word_index
from upload.bpe_spec import ACCEPTED, bpe_spec
from upload.errors import UploadError
from upload.limits import MAX_JSON_BYTES
from upload.spec_checks import check_spec
from upload.spec_wire import WireSpec

_PIPELINE_PARTS = (
    "normalizer",
    "pre_tokenizer",
    "post_processor",
    "decoder",
    "padding",
    "truncation",
)


def _reference(kind: str) -> dict:
    """The normalizer, pre-tokenizer and decoder JSON our builders write for ``kind``."""
    tok = wordpiece_tokenizer({UNK: 0}) if kind == "wordpiece" else char_tokenizer({"a": 0})
    full = json.loads(tok.to_str())
    return {part: full.get(part) for part in _PIPELINE_PARTS}


def spec_from_json(text: str, source: str) -> dict:
    """The spec of a tokenizer JSON string (worker side: the string is the user's).

    Raises:
        UploadError: naming ``source``, if the JSON is unreadable, nested too deeply,
            too large, or not a tokenizer this app builds (another model type, or a
            normalizer / pre-tokenizer / decoder other than ours: "retrain with
            training.train, or convert with upload.convert").
    """
    if len(text) > MAX_JSON_BYTES:
        raise UploadError(f"{source}: refused: the tokenizer JSON is larger than 16 MB")
    try:
        data = json.loads(text)
    except RecursionError:
        raise UploadError(f"{source}: refused: the tokenizer JSON is nested too deeply") from None
    except ValueError:
        raise UploadError(f"{source}: the tokenizer is not valid JSON") from None
    model = data.get("model") if isinstance(data, dict) else None
    if not isinstance(model, dict):
        raise UploadError(f"{source}: the tokenizer JSON has no 'model'")
    if model.get("type") == "BPE":
        return bpe_spec(data, source)
    kind = {"WordPiece": "wordpiece", "WordLevel": "char"}.get(str(model.get("type")))
    if kind is None or {p: data.get(p) for p in _PIPELINE_PARTS} != _reference(kind):
        raise UploadError(_FOREIGN.format(source=source))
    vocab = model.get("vocab")
    if kind == "char":
        stoi = {t: i for t, i in vocab.items() if t != UNK} if isinstance(vocab, dict) else None
        return {"kind": "char", "stoi": stoi}
    return {
        "kind": "wordpiece",
        "vocab": vocab,
        "max_input_chars_per_word": model.get("max_input_chars_per_word", 64),
    }


_FOREIGN = (
    "{source}: refused: its tokenizer is not one this app builds; "
    + ACCEPTED
    + ". Retrain with training.train"
)


def read_metadata(config_json: str, tokenizer_json: str, source: str, limits=None):
    """A checkpoint's or graph's ``config`` and ``tokenizer`` metadata strings (worker side)
    -> ``(ModelConfig, spec)``, both checked: the config within ``check_config_size``
    (``limits``: an ``upload.limits.Limits``, the browser's by default), the spec against
    its ``vocab_size``.

    Raises:
        UploadError: naming ``source``: "bad config: ..." (unreadable, nested too deeply,
            not an object, a bad field) or what :func:`spec_from_json` and
            ``check_spec`` refuses.
    """
    from models.config import ModelConfig
    from upload.limits import BROWSER
    from upload.sizes import check_config_size

    try:
        cfg = ModelConfig.from_json(config_json)
    except RecursionError:
        raise UploadError(f"{source}: bad config: nested too deeply") from None
    except (ValueError, TypeError, AttributeError) as exc:
        raise UploadError(f"{source}: bad config: {exc}") from None
    check_config_size(source, cfg, limits or BROWSER)
    return cfg, check_spec(spec_from_json(tokenizer_json, source), cfg.vocab_size, source)


def build(spec: dict) -> Tokenizer | SubsetTokenizer:
    """The tokenizer of a checked spec, built by our own code (no user regex, no padding).
    A vocabulary of ``SUBSET_FROM`` entries or more gives a
    ``models.subset_tokenizer.SubsetTokenizer``: the library's tokenizer over 262,144
    entries holds the server's GIL 0.2-0.8 s while it is built (issue #25). Its vocabulary
    (``models.tokenizer.vocab_of``) is the spec's own dict: reading it back from the
    library (``get_vocab``) holds the GIL 0.4 s for 262,144 tokens. Its suggestion index
    (``models.word_index.word_index``) is the ``word_index`` the worker ordered, when the
    spec has one (``upload.spec_wire.to_wire``).

    Raises:
        UploadError: if the tokenizers library refuses the vocabulary.
    """
    tokenizer = _tokenizer(spec)
    if "word_index" in spec:  # checked by check_spec: words of the vocabulary, by length
        word_index.keep(tokenizer, WordIndex.ordered(spec["word_index"]))
    return tokenizer


def for_export(spec: dict) -> dict:
    """``spec`` without what only the server uses (the worker's ``word_index``): what the
    exporter builds the graphs from and the export cache's key hashes (a
    ``upload.spec_wire.WireSpec`` stays one, with its pieces)."""
    if isinstance(spec, WireSpec):
        return spec.without("word_index")
    return {field: value for field, value in spec.items() if field != "word_index"}


def _tokenizer(spec: dict) -> Tokenizer | SubsetTokenizer:
    vocab = spec["stoi"] if spec["kind"] == "char" else spec["vocab"]
    settings = {k: spec[k] for k in (*BPE_SETTINGS, *SENTENCEPIECE_SETTINGS) if k in spec}
    if len(vocab) >= SUBSET_FROM:
        return SubsetTokenizer(
            spec["kind"],
            vocab,
            spec.get("merges", ()),
            max_input_chars_per_word=spec.get("max_input_chars_per_word", 64),
            settings=settings,
        )
    if spec["kind"] == "char":
        tokenizer = char_tokenizer(vocab)
    elif spec["kind"] in ("bpe", "sentencepiece"):
        try:
            tokenizer = build_bpe(spec["kind"], vocab, spec["merges"], settings)
        except ValueError as exc:
            raise UploadError(str(exc)) from None
    else:
        tokenizer = wordpiece_tokenizer(vocab, spec["max_input_chars_per_word"])
    vocab_of.keep(tokenizer, vocab)
    return tokenizer
