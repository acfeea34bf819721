"""A BPE ``tokenizer.json`` as a spec (worker side): which of our pipelines it is, and its data.

Accepted pipelines (``models/bpe.py`` builds each; every other part of a file, a
normalizer, regex, decoder or post-processor of its own, is refused naming the part):

* ``{"kind": "bpe", ...}``: byte-level BPE. Pre-tokenizer: GPT-2's ``ByteLevel`` with the
  library's regex (GPT-2, GPT-Neo, GPT-NeoX; ``pre`` "gpt2") or a ``Split`` whose regex
  is exactly Qwen2's or Llama-3's (``pre`` "qwen2" / "llama3") before a ``ByteLevel`` without
  regex; normalizer none or NFC (``nfc``); decoder ``ByteLevel``; no byte fallback.
* ``{"kind": "sentencepiece", ...}``: SentencePiece-style BPE (Llama 1/2, Mistral,
  TinyLlama): the legacy normalizer ``Sequence[Prepend("▁"), Replace(" ", "▁")]`` with no
  pre-tokenizer (``pipeline`` "legacy"), or no normalizer and a ``Metaspace("▁",
  prepend_scheme "first", split false)`` pre-tokenizer ("metaspace"); decoder
  ``Sequence[Replace("▁", " "), ByteFallback, Fuse, Strip(" ", 1, 0)]`` ("fallback") or
  ``Metaspace`` ("metaspace"); ``unk``, ``byte_fallback``, ``fuse_unk`` as the file's.

Both keep: ``vocab`` (with the added tokens' ids), ``merges`` (pairs), ``ignore_merges``,
``special`` (added tokens matched before the normalizer), ``normalized`` (those matched
after it, only where there is a normalizer), and ``bos`` / ``eos``: the tokens the
post-processor (``TemplateProcessing`` "bos $A eos", each optional) puts around a text.
"""

from __future__ import annotations

from models.bpe import PATTERNS, SPACE
from upload.errors import UploadError

ACCEPTED = (
    "accepted: GPT-2's, GPT-NeoX's, Qwen2's and Llama-3's byte-level BPE, Llama's and "
    "Mistral's SentencePiece BPE, or this app's own; its own pipeline would run on the server"
)
_LEGACY = {
    "type": "Sequence",
    "normalizers": [
        {"type": "Prepend", "prepend": SPACE},
        {"type": "Replace", "pattern": {"String": " "}, "content": SPACE},
    ],
}
_METASPACE = {"type": "Metaspace", "replacement": SPACE, "prepend_scheme": "first", "split": False}
_FALLBACK = {
    "type": "Sequence",
    "decoders": [
        {"type": "Replace", "pattern": {"String": SPACE}, "content": " "},
        {"type": "ByteFallback"},
        {"type": "Fuse"},
        {"type": "Strip", "content": " ", "start": 1, "stop": 0},
    ],
}


def refuse(source: str, part: str, why: str) -> UploadError:
    """The one-line refusal of a tokenizer file's ``part`` (a top-level key)."""
    return UploadError(
        f"{source}: refused: its tokenizer is not one this app builds ({part}: {why}); {ACCEPTED}"
    )


def _byte_level(part: object, regex: bool) -> bool:
    """A ``ByteLevel`` pre-tokenizer (or decoder) entry, using GPT-2's regex or none."""
    return (
        isinstance(part, dict)
        and part.get("type") == "ByteLevel"
        and part.get("use_regex", True) in ((True, None) if regex else (False,))
    )


def _pre(pre: object, source: str) -> tuple[str, bool]:
    """(``pre``, add_prefix_space) of a byte-level file's pre-tokenizer."""
    if _byte_level(pre, regex=True):
        return "gpt2", bool(pre.get("add_prefix_space", False))
    steps = pre.get("pretokenizers") if isinstance(pre, dict) else None
    if isinstance(steps, list) and pre.get("type") == "Sequence" and len(steps) == 2:
        split, level = steps
        pattern = split.get("pattern") if isinstance(split, dict) else None
        regex = pattern.get("Regex") if isinstance(pattern, dict) else None
        names = [name for name, known in PATTERNS.items() if regex == known]
        plain = isinstance(split, dict) and split.get("type") == "Split"
        plain = plain and split.get("behavior") == "Isolated" and split.get("invert") is False
        if names and plain and _byte_level(level, regex=False):
            return names[0], bool(level.get("add_prefix_space", False))
        if plain and not names:
            raise refuse(source, "pre_tokenizer", "a Split regex other than Qwen2's or Llama-3's")
    raise refuse(source, "pre_tokenizer", "not GPT-2's, Qwen2's or Llama-3's byte-level split")


def _sentencepiece(data: dict, source: str) -> dict:
    """The SentencePiece fields of a file whose decoder is not byte-level."""
    norm, pre, decoder = data.get("normalizer"), data.get("pre_tokenizer"), data.get("decoder")
    if norm == _LEGACY and pre is None:
        pipeline = "legacy"
    elif norm is None and pre == _METASPACE:
        pipeline = "metaspace"
    elif norm not in (None, _LEGACY):
        raise refuse(source, "normalizer", "not SentencePiece's Prepend and Replace of spaces")
    else:
        why = "not Metaspace (prepend_scheme first, split false), nor none after the legacy one"
        raise refuse(source, "pre_tokenizer", why)
    forms = {"fallback": _FALLBACK, "metaspace": _METASPACE}
    names = [name for name, form in forms.items() if decoder == form]
    if not names:
        why = "not ByteLevel, SentencePiece's Replace+ByteFallback+Fuse+Strip, or Metaspace"
        raise refuse(source, "decoder", why)
    model = data["model"]
    unk = model.get("unk_token")
    flags = [model.get(k, False) for k in ("byte_fallback", "fuse_unk", "ignore_merges")]
    if not (unk is None or isinstance(unk, str)) or not all(type(f) is bool for f in flags):
        raise refuse(source, "model", "unk_token, byte_fallback, fuse_unk or ignore_merges")
    return {
        "kind": "sentencepiece",
        "unk": unk,
        "byte_fallback": flags[0],
        "fuse_unk": flags[1],
        "ignore_merges": flags[2],
        "pipeline": pipeline,
        "decoder": names[0],
    }


def _byte_level_fields(data: dict, source: str) -> dict:
    """The byte-level BPE fields of a file whose decoder is ``ByteLevel``."""
    norm = data.get("normalizer")
    if norm not in (None, {"type": "NFC"}):
        raise refuse(source, "normalizer", "not none or NFC")
    pre, add_prefix_space = _pre(data.get("pre_tokenizer"), source)
    model = data["model"]
    if model.get("byte_fallback", False):
        raise refuse(source, "model", "byte_fallback with a byte-level decoder")
    if type(model.get("ignore_merges", False)) is not bool:
        raise refuse(source, "model", "ignore_merges is not true or false")
    return {
        "kind": "bpe",
        "add_prefix_space": add_prefix_space,
        "pre": pre,
        "nfc": norm is not None,
        "ignore_merges": model.get("ignore_merges", False),
    }


def _template(part: dict, vocab: dict, source: str) -> tuple[str | None, str | None]:
    """(bos, eos) of a ``TemplateProcessing`` whose single template is [bos] $A [eos], each
    one vocabulary token with its id."""
    single, marks = part.get("single"), part.get("special_tokens")
    if not isinstance(single, list) or not isinstance(marks, dict):
        raise refuse(source, "post_processor", "a TemplateProcessing without its templates")
    shape = "".join(map(_shape, single))
    if shape not in ("A", "sA", "As", "sAs"):
        raise refuse(source, "post_processor", "a template other than [bos] $A [eos]")
    tokens = [item["SpecialToken"].get("id") for item in single if "SpecialToken" in item]
    for token in tokens:
        mark = marks.get(token) if isinstance(token, str) else None
        if (
            not isinstance(mark, dict)
            or mark.get("tokens") != [token]
            or token not in vocab
            or mark.get("ids") != [vocab[token]]
        ):
            why = f"{str(token)[:40]!r} is not one vocabulary token with its id"
            raise refuse(source, "post_processor", why)
    bos = tokens[0] if shape.startswith("s") else None
    eos = tokens[-1] if shape.endswith("s") else None
    return bos, eos


def _shape(item: object) -> str:
    """A template item as "A" (the text), "s" (a special token) or "?" (anything else)."""
    if item == {"Sequence": {"id": "A", "type_id": 0}}:
        return "A"
    special = isinstance(item, dict) and isinstance(item.get("SpecialToken"), dict)
    return "s" if special else "?"


def _post(part: object, vocab: dict, byte_level: bool, source: str, inner=False) -> tuple:
    """(bos, eos) of a post-processor: none, ``ByteLevel`` (byte-level files; offsets only),
    ``TemplateProcessing``, or a ``Sequence`` of them (not of sequences)."""
    steps = part.get("processors") if isinstance(part, dict) else None
    sequence = isinstance(part, dict) and part.get("type") == "Sequence"
    if sequence and isinstance(steps, list) and not inner:
        found = [_post(step, vocab, byte_level, source, inner=True) for step in steps]
        templates = [f for f in found if f != (None, None)]
        if len(templates) > 1:
            raise refuse(source, "post_processor", "more than one template")
        return templates[0] if templates else (None, None)
    if not inner and part is None:
        return None, None
    if byte_level and isinstance(part, dict) and part.get("type") == "ByteLevel":
        return None, None
    if isinstance(part, dict) and part.get("type") == "TemplateProcessing":
        return _template(part, vocab, source)
    raise refuse(source, "post_processor", "not ByteLevel or a [bos] $A [eos] template")


def _merges(model: dict, source: str) -> list:
    merges = model.get("merges")
    if not isinstance(merges, list):
        raise UploadError(f"{source}: the BPE tokenizer has no list of merges")
    pairs = []
    for merge in merges:
        pair = merge.split(" ") if isinstance(merge, str) else merge
        if not isinstance(pair, list) or len(pair) != 2:
            raise UploadError(f"{source}: a BPE merge is not a pair of tokens: {str(merge)[:40]!r}")
        pairs.append(pair)
    return pairs


def _added(data: dict, vocab: dict, has_normalizer: bool, source: str) -> tuple[list, list]:
    """(special, normalized) added tokens, each entered in ``vocab`` with its id (Qwen2's
    and Llama-3's are only in ``added_tokens``).

    Raises:
        UploadError: not a list of objects, a token with lstrip / rstrip / single_word, or
            one not in the vocabulary whose id another token has.
    """
    added = data.get("added_tokens") or []
    if not isinstance(added, list) or not all(isinstance(a, dict) for a in added):
        raise UploadError(f"{source}: the tokenizer's added_tokens must be a list of objects")
    special, normalized, ids = [], [], None
    for entry in added:
        token, i = entry.get("content"), entry.get("id")
        if not isinstance(token, str) or type(i) is not int:
            raise UploadError(f"{source}: an added token is not a string with an id")
        if any(entry.get(flag) for flag in ("lstrip", "rstrip", "single_word")):
            raise refuse(source, "added_tokens", f"{token[:40]!r} strips spaces or is a word")
        # a token the model's vocabulary holds keeps the vocabulary's id, as the library
        # reads such a file (an added_tokens id that differs is not used)
        if token not in vocab:
            ids = {v for v in vocab.values() if type(v) is int} if ids is None else ids
            if i in ids:
                raise UploadError(f"{source}: the added token {token[:40]!r} takes another's id")
            vocab[token] = i
            ids.add(i)
        after_normalizer = has_normalizer and entry.get("normalized") is True
        (normalized if after_normalizer else special).append(token)
    return special, normalized


def bpe_spec(data: dict, source: str) -> dict:
    """The spec of a BPE tokenizer JSON (``data["model"]["type"] == "BPE"``): the byte-level
    family when its decoder is ``ByteLevel``, else the SentencePiece family (module
    docstring). Padding and truncation are not kept (the app cuts at the model's context).

    Raises:
        UploadError: naming ``source`` and the part (normalizer, pre_tokenizer, decoder,
            post_processor, model, added_tokens) that is not one of ours, merges that are
            not pairs, or a vocabulary that is not a map.
    """
    model = data["model"]
    if model.get("dropout") not in (None, 0, 0.0):
        raise refuse(source, "model", "BPE dropout")
    if model.get("continuing_subword_prefix") not in (None, "") or model.get(
        "end_of_word_suffix"
    ) not in (None, ""):
        raise refuse(source, "model", "subword prefixes or suffixes")
    decoder = data.get("decoder")
    byte_level = isinstance(decoder, dict) and decoder.get("type") == "ByteLevel"
    fields = _byte_level_fields(data, source) if byte_level else _sentencepiece(data, source)
    vocab = model.get("vocab")
    if not isinstance(vocab, dict):
        raise UploadError(f"{source}: the BPE tokenizer's vocab is not a map of tokens to ids")
    has_normalizer = data.get("normalizer") is not None
    special, normalized = _added(data, vocab, has_normalizer, source)
    bos, eos = _post(data.get("post_processor"), vocab, byte_level, source)
    return {
        **fields,
        "vocab": vocab,
        "merges": _merges(model, source),
        "special": special,
        **({"normalized": normalized} if normalized else {}),
        "bos": bos,
        "eos": eos,
    }
