"""A tokenizer spec on the worker's pipe: its vocabulary and merges as JSON pieces.

A message's header is one JSON document (``upload/protocol.py``). Decoding one that holds a
262,144-word vocabulary holds the GIL 0.18 s, with as many BPE merges 0.6 s, in one C call
(``json.loads``), and every other session of the server waits that long (issue #25). On
the pipe, the spec's ``vocab`` (or ``stoi``) and ``merges`` are lists of pieces of
``CHUNK`` entries each (2,048), a piece being base64 of its UTF-8 JSON: the header's decoder only
copies strings without escapes, and each piece is decoded on its own, paced, the other
sessions' threads running between pieces. Merges travel as one flat list of strings and arrive as
tuples: strings are not tracked by the garbage collector and a tuple of strings leaves its
lists, so 262,144 merges do not lengthen its full passes (0.05-0.1 s each, GIL held).
"""

from __future__ import annotations

import base64
import binascii
import json
from itertools import chain

from models.pieces import paced, pieces
from models.word_index import index_words

_LARGE = ("vocab", "stoi", "merges", "word_index")  # fields that grow with the vocabulary
MARK = "pieces"  # the header's key for them: {field: [base64 of JSON, ...]}


class WireSpec(dict):
    """A spec as :func:`from_wire` decoded it, keeping the pieces it came in (``wire``:
    field -> pieces): sent on (:func:`to_wire`, the export's request) and hashed
    (``upload.export_cache.export_key``) as they are. Encoding a 262,144-word spec
    again took 0.5 s of the server's interpreter, its canonical hash 0.4 s (issue #25).
    The fields it was decoded from must not be changed."""

    wire: dict[str, list[str]]

    def without(self, field: str) -> WireSpec:
        """A copy without ``field``, decoded and in its pieces."""
        out = WireSpec((k, v) for k, v in self.items() if k != field)
        out.wire = {k: v for k, v in self.wire.items() if k != field}
        return out


def _piece(value: dict | list) -> str:
    return base64.b64encode(json.dumps(value, ensure_ascii=False).encode()).decode()


def _unpiece(piece: object) -> object:
    if not isinstance(piece, str):
        return None
    try:
        return json.loads(base64.b64decode(piece, validate=True))
    except binascii.Error:
        raise ValueError("a tokenizer's piece is not base64") from None


def _flat(merges: list) -> list:
    """Merges as one list of strings, ``[a1, b1, a2, b2, ...]``: strings are not tracked by
    the garbage collector, 262,144 two-item lists are (and lengthen its passes).

    Raises:
        ValueError: if a merge is not a pair.
    """
    flat = list(chain.from_iterable(merges))
    if len(flat) != 2 * len(merges):
        raise ValueError("a BPE merge is not a pair of tokens")
    return flat


def _pieces_of(value: dict | list):
    """A dict's (keys, values) or a list's slices, in paced pieces (``models.pieces``); one
    empty piece for an empty value (the field must arrive)."""
    if not value:
        return [([], [])] if isinstance(value, dict) else [[]]
    return pieces(list(value), list(value.values())) if isinstance(value, dict) else pieces(value)


def to_wire(spec: object) -> object:
    """``spec`` (``upload.tokenizer_spec``) with its large fields as JSON pieces; anything
    that is not a dict (a refusal, None) unchanged. The worker also orders the
    vocabulary's whole words for the server's suggestions (``word_index``:
    ``models.word_index.index_words``), which held the server's interpreter 0.5 s for
    262,144 words (issue #25)."""
    if not isinstance(spec, dict):
        return spec
    if isinstance(spec, WireSpec):  # decoded from pieces: sent on in them
        return {**{k: v for k, v in spec.items() if k not in spec.wire}, MARK: spec.wire}
    wire, parts = dict(spec), {}
    vocab = spec.get("vocab", spec.get("stoi"))
    if isinstance(vocab, dict) and "word_index" not in spec:
        try:
            wire["word_index"] = index_words(vocab)
        except (TypeError, AttributeError, ValueError):  # not tokens to ids: check_spec refuses it
            pass
    for field in _LARGE:
        value = wire.pop(field, None)
        if field == "merges" and isinstance(value, list):
            value = _flat(value)
        if isinstance(value, dict):
            parts[field] = [_piece(dict(zip(*part, strict=True))) for part in _pieces_of(value)]
        elif isinstance(value, list):
            parts[field] = [_piece(part) for part in _pieces_of(value)]
        elif value is not None:
            wire[field] = value
    return {**wire, MARK: parts}


def from_wire(wire: object) -> object:
    """The spec :func:`to_wire` sent (a :class:`WireSpec`); anything else unchanged
    (``check_spec`` judges it).

    Raises:
        ValueError: pieces that are not base64 of JSON of one kind (maps or lists).
    """
    if not isinstance(wire, dict) or MARK not in wire:
        return wire
    spec, parts = WireSpec(wire), wire[MARK]
    del spec[MARK]
    if not isinstance(parts, dict):
        raise ValueError("a tokenizer's pieces are not a map")
    spec.wire = parts
    for field, encoded in parts.items():
        if field not in _LARGE or not isinstance(encoded, list) or not encoded:
            raise ValueError(f"a tokenizer's field {str(field)[:20]!r} is not a list of pieces")
        spec[field] = _decoded(field, encoded)
    return spec


def _decoded(field: str, encoded: list) -> dict | list:
    """One field's pieces decoded, a piece at a time, paced (``models.pieces``): one C call
    making 262,144 merge tuples held the GIL 0.16-0.27 s, the collector running inside it.

    Raises:
        ValueError: pieces not all maps or all lists, merges that are not pairs.
    """
    kind = type(_unpiece(encoded[0]))  # all maps (a vocabulary) or all lists
    if kind not in (dict, list):
        raise ValueError(f"a tokenizer's {field} pieces are not all maps or all lists")
    value = kind()
    for piece in paced(encoded):
        part = _unpiece(piece)
        if type(part) is not kind:
            raise ValueError(f"a tokenizer's {field} pieces are not all maps or all lists")
        if kind is dict:
            value.update(part)
        elif field == "merges":
            if len(part) % 2:
                raise ValueError("a tokenizer's merges are not pairs")
            value += zip(part[0::2], part[1::2], strict=True)  # pairs again, as tuples
        else:
            value += part
    return value
