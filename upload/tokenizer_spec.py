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
  bool, "special": [token, ...]}``: GPT-2's byte-level BPE (its published
  ``tokenizer.json``; ``models.tokenizer.bpe_tokenizer``), accepted only with GPT-2's
  byte-level pipeline; the pre-tokenizer regex is the library's built-in GPT-2 one, never
  the file's. ``special`` are its special tokens (``<|endoftext|>``), each a vocabulary
  entry, matched in a text as literal strings.

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

from models.subset_tokenizer import SUBSET_FROM, SubsetTokenizer
from models.tokenizer import UNK, bpe_tokenizer, char_tokenizer, vocab_of, wordpiece_tokenizer
from models.word_index import WordIndex, word_index
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
        return _bpe_spec(data, model, source)
    kind = {"WordPiece": "wordpiece", "WordLevel": "char"}.get(model.get("type"))
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
    "{source}: refused: its tokenizer is not one this app builds (a word-level tokenizer "
    "from training.train, a character vocabulary, or GPT-2's byte-level BPE); its own "
    "normalizer, pre-tokenizer, regex, padding or truncation would run on the server. "
    "Retrain with training.train"
)


def _byte_level(part: object) -> bool:
    """A pre-tokenizer or decoder entry that is GPT-2's ``ByteLevel`` with its own regex."""
    return (
        isinstance(part, dict)
        and part.get("type") == "ByteLevel"
        and part.get("use_regex", True) in (True, None)
    )


def _bpe_spec(data: dict, model: dict, source: str) -> dict:
    """The spec of a byte-level BPE tokenizer JSON (GPT-2's published ``tokenizer.json``
    and its fine-tunes'): vocabulary, merges as pairs, ``add_prefix_space``. Padding and
    truncation are not kept (the app cuts at the model's context itself).

    Raises:
        UploadError: another pipeline (a normalizer, a non-byte-level pre-tokenizer or
            decoder, dropout, subword prefixes or suffixes, byte fallback) or merges that
            are not pairs.
    """
    pre, decoder = data.get("pre_tokenizer"), data.get("decoder")
    plain_bpe = (
        data.get("normalizer") is None
        and _byte_level(pre)
        and _byte_level(decoder)
        and model.get("dropout") in (None, 0, 0.0)
        and model.get("continuing_subword_prefix") in (None, "")
        and model.get("end_of_word_suffix") in (None, "")
        and not model.get("byte_fallback", False)
    )
    if not plain_bpe:
        raise UploadError(_FOREIGN.format(source=source))
    merges = model.get("merges")
    if not isinstance(merges, list):
        raise UploadError(f"{source}: the BPE tokenizer has no list of merges")
    pairs = []
    for merge in merges:
        pair = merge.split(" ") if isinstance(merge, str) else merge
        if not isinstance(pair, list) or len(pair) != 2:
            raise UploadError(f"{source}: a BPE merge is not a pair of tokens: {str(merge)[:40]!r}")
        pairs.append(pair)
    added = data.get("added_tokens") or []
    if not isinstance(added, list) or not all(isinstance(a, dict) for a in added):
        raise UploadError(f"{source}: the tokenizer's added_tokens must be a list of objects")
    return {
        "kind": "bpe",
        "vocab": model.get("vocab"),
        "merges": pairs,
        "add_prefix_space": bool(pre.get("add_prefix_space", False)),
        "special": [a.get("content") for a in added if a.get("special")],
    }


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
    if len(vocab) >= SUBSET_FROM:
        return SubsetTokenizer(
            spec["kind"],
            vocab,
            spec.get("merges", ()),
            spec.get("add_prefix_space", False),
            spec.get("special", ()),
            spec.get("max_input_chars_per_word", 64),
        )
    if spec["kind"] == "char":
        tokenizer = char_tokenizer(vocab)
    elif spec["kind"] == "bpe":
        try:
            tokenizer = bpe_tokenizer(
                vocab, spec["merges"], spec["add_prefix_space"], spec["special"]
            )
        except ValueError as exc:
            raise UploadError(str(exc)) from None
    else:
        tokenizer = wordpiece_tokenizer(vocab, spec["max_input_chars_per_word"])
    vocab_of.keep(tokenizer, vocab)
    return tokenizer
