"""Checks of a tokenizer spec (``upload/tokenizer_spec.py``) on the server's side, against
explicit limits and the model's token rows, before anything is built from it.

A spec of 262,144 entries is checked by C loops over paced pieces (``models.pieces``):
a Python loop over all of them takes 0.2-0.7 s of the server's interpreter, and one C
loop over all of them holds the GIL 10-40 ms, while the class waits (issue #25).
"""

from __future__ import annotations

from operator import add, gt, itemgetter

from models.bpe import DECODERS, PIPELINES, PRE_TOKENIZERS
from models.pieces import pieces
from models.tokenizer import UNK
from upload.errors import UploadError
from upload.limits import MAX_MERGES, MAX_TOKEN_CHARS, MAX_VOCAB
from upload.token_rows import check_rows

MAX_WORD_CHARS = 1000  # WordPiece's longest word before it gives [UNK]
KINDS = ("wordpiece", "char", "bpe", "sentencepiece")
MAX_SPECIAL = 1024  # added tokens of a BPE tokenizer (GPT-2 has one, Mistral v0.3 771)


def check_spec(spec: object, vocab_size: int, source: str) -> dict:
    """Server side: ``spec`` against explicit limits and the model's ``vocab_size``.

    Returns:
        The spec (the same object) once every field was checked.

    Raises:
        UploadError: naming ``source`` and the field: an unknown kind, a vocabulary
            that is not a map of short strings to distinct ids, more than MAX_VOCAB
            entries or merges, merges that are not pairs of vocabulary tokens, or token
            rows that do not match the tokenizer (:func:`check_rows`, both numbers).
    """
    if not isinstance(spec, dict) or spec.get("kind") not in KINDS:
        raise UploadError(f"{source}: the tokenizer is not one this app builds")
    vocab = spec.get("stoi") if spec["kind"] == "char" else spec.get("vocab")
    if not isinstance(vocab, dict) or not vocab or len(vocab) > MAX_VOCAB:
        raise UploadError(
            f"{source}: the tokenizer's vocabulary must map 1 to {MAX_VOCAB:,} tokens to ids"
        )
    if not _plain(vocab, 1 if spec["kind"] == "char" else MAX_TOKEN_CHARS):
        _name_the_entry(vocab, spec["kind"], source)  # a bad entry; else an id twice
        raise UploadError(f"{source}: the tokenizer gives two tokens the same id")
    top = max(vocab.values())
    if spec["kind"] == "char" and (top != len(vocab) - 1 or min(vocab.values()) != 0):
        raise UploadError(f"{source}: a character vocabulary must use the ids 0..n-1 once each")
    check_rows(len(vocab), top, vocab_size, source)
    if spec["kind"] == "wordpiece":
        width = spec.get("max_input_chars_per_word")
        if type(width) is not int or not 0 < width <= MAX_WORD_CHARS or UNK not in vocab:
            raise UploadError(f"{source}: the tokenizer's settings are out of range")
    if spec["kind"] in ("bpe", "sentencepiece"):
        _check_merges(spec, vocab, source)
        _check_settings(spec, vocab, source)
    if "word_index" in spec and not _words_of(spec["word_index"], vocab):
        raise UploadError(f"{source}: the tokenizer's word index is not words of its vocabulary")
    return spec


def _words_of(words: object, vocab: dict) -> bool:
    """``words`` (the worker's ``word_index``) a list of at most as many strings as
    ``vocab`` holds, each one of its tokens, none shorter than the one before: C loops in
    pieces."""
    if not isinstance(words, list) or len(words) > len(vocab):
        return False
    tokens, last = vocab.keys(), 0
    for part in pieces(words):
        if set(map(type, part)) != {str} or not tokens >= set(part):
            return False
        lengths = list(map(len, part))
        if lengths[0] < last or any(map(gt, lengths, lengths[1:])):
            return False
        last = lengths[-1]
    return True


def _plain(vocab: dict, longest: int) -> bool:
    """Every token a string of 1 to ``longest`` characters, every id an int >= 0, no id
    twice: checked by C loops (``map``) in pieces (``models.pieces``), as a Python loop
    over 262,144 entries takes 0.2 s of the server's interpreter and one C loop over them
    all holds the GIL 10-20 ms (issue #25)."""
    ids: set[int] = set()
    for tokens, values in pieces(list(vocab), list(vocab.values())):
        if (
            set(map(type, tokens)) != {str}
            or min(map(len, tokens)) < 1
            or max(map(len, tokens)) > longest
            or set(map(type, values)) != {int}
            or min(values) < 0
        ):
            return False
        ids.update(values)
    return len(ids) == len(vocab)


def _name_the_entry(vocab: dict, kind: str, source: str) -> None:
    """Raise UploadError naming the first entry :func:`_plain` refuses."""
    for token, i in vocab.items():
        if not isinstance(token, str) or not 0 < len(token) <= MAX_TOKEN_CHARS:
            raise UploadError(f"{source}: the vocabulary holds a token that is not a short string")
        if kind == "char" and len(token) != 1:
            raise UploadError(f"{source}: a character vocabulary holds {token[:20]!r}")
        if type(i) is not int or i < 0:
            raise UploadError(f"{source}: the vocabulary gives {token[:20]!r} the id {i!r}")


def _pairs_of(merges: list, vocab: dict) -> bool:
    """Every merge a pair of vocabulary tokens whose join is one too: C loops in pieces
    (a Python loop over 262,144 merges takes 0.7 s of the server's interpreter)."""
    tokens = vocab.keys()
    for part in pieces(merges):
        if not set(map(type, part)) <= {list, tuple} or set(map(len, part)) != {2}:
            return False
        firsts, seconds = list(map(itemgetter(0), part)), list(map(itemgetter(1), part))
        if set(map(type, firsts)) | set(map(type, seconds)) != {str}:
            return False
        if not tokens >= {*firsts, *seconds, *map(add, firsts, seconds)}:
            return False
    return True


def _check_merges(spec: dict, vocab: dict, source: str) -> None:
    merges = spec.get("merges")
    if not isinstance(merges, list) or len(merges) > MAX_MERGES:
        raise UploadError(f"{source}: a BPE tokenizer needs at most {MAX_MERGES:,} merges")
    if not _pairs_of(merges, vocab):
        for pair in merges:  # name the first merge refused
            if (
                not isinstance(pair, list | tuple)
                or len(pair) != 2
                or not all(isinstance(t, str) and t in vocab for t in pair)
                or pair[0] + pair[1] not in vocab
            ):
                raise UploadError(
                    f"{source}: the BPE merge {str(pair)[:60]} joins tokens the vocabulary lacks"
                )


def _tokens(value: object, vocab: dict, most: int) -> bool:
    """``value`` a list of at most ``most`` vocabulary tokens."""
    return (
        isinstance(value, list)
        and len(value) <= most
        and all(isinstance(t, str) and t in vocab for t in value)
    )


def _check_settings(spec: dict, vocab: dict, source: str) -> None:
    """A BPE spec's other fields (``upload/bpe_spec.py``), each a known value; fields a spec
    written before they existed lacks take the builders' defaults (``models.bpe``)."""
    if spec["kind"] == "bpe":
        ok = type(spec.get("add_prefix_space")) is bool
        ok = ok and spec.get("pre", "gpt2") in PRE_TOKENIZERS
        flags = ("nfc", "ignore_merges")
    else:
        unk = spec.get("unk")
        ok = unk is None or (isinstance(unk, str) and unk in vocab)
        ok = ok and spec.get("pipeline") in PIPELINES and spec.get("decoder") in DECODERS
        flags = ("byte_fallback", "fuse_unk", "ignore_merges")
    ok = ok and all(type(spec.get(flag, False)) is bool for flag in flags)
    added = spec.get("special"), spec.get("normalized", [])
    ok = ok and all(_tokens(part, vocab, MAX_SPECIAL) for part in added)
    ok = ok and all(spec.get(t) is None or _tokens([spec[t]], vocab, 1) for t in ("bos", "eos"))
    if not ok or len(added[0]) + len(added[1]) > MAX_SPECIAL:
        raise UploadError(
            f"{source}: the tokenizer's settings are out of range (special tokens must be "
            f"at most {MAX_SPECIAL} vocabulary entries)"
        )
