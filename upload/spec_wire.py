"""A tokenizer spec on the worker's pipe: its vocabulary and merges as JSON pieces.

A message's header is one JSON document (``upload/protocol.py``). Decoding one that holds a
262,144-word vocabulary holds the GIL 0.18 s, with as many BPE merges 0.6 s, in one C call
(``json.loads``), and every other session of the server waits that long (issue #25). On
the pipe, the spec's ``vocab`` (or ``stoi``) and ``merges`` are lists of pieces of
``CHUNK`` entries each (2,048), a piece being base64 of its UTF-8 JSON: the header's decoder only
copies strings without escapes, and each piece is decoded on its own, the other sessions'
threads running between pieces. Merges travel as one flat list of strings and arrive as
tuples: strings are not tracked by the garbage collector and a tuple of strings leaves its
lists, so 262,144 merges do not lengthen its full passes (0.05-0.1 s each, GIL held).
"""

from __future__ import annotations

import base64
import binascii
import json
from itertools import chain

from models.pieces import PIECE

CHUNK = PIECE  # vocabulary entries or merges per JSON piece (models.pieces)
_LARGE = ("vocab", "stoi", "merges")  # a spec's fields that grow with the vocabulary
MARK = "pieces"  # the header's key for them: {field: [base64 of JSON, ...]}


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


def to_wire(spec: object) -> object:
    """``spec`` (``upload.tokenizer_spec``) with its large fields as JSON pieces; anything
    that is not a dict (a refusal, None) unchanged."""
    if not isinstance(spec, dict):
        return spec
    wire, pieces = dict(spec), {}
    for field in _LARGE:
        value = wire.pop(field, None)
        if field == "merges" and isinstance(value, list):
            value = _flat(value)
        if isinstance(value, dict):
            items = list(value.items())
            pieces[field] = [
                _piece(dict(items[i : i + CHUNK])) for i in range(0, max(len(items), 1), CHUNK)
            ]
        elif isinstance(value, list):
            pieces[field] = [
                _piece(value[i : i + CHUNK]) for i in range(0, max(len(value), 1), CHUNK)
            ]
        elif value is not None:
            wire[field] = value
    return {**wire, MARK: pieces}


def from_wire(wire: object) -> object:
    """The spec :func:`to_wire` sent; anything else unchanged (``check_spec`` judges it).

    Raises:
        ValueError: pieces that are not base64 of JSON of one kind (maps or lists).
    """
    if not isinstance(wire, dict) or MARK not in wire:
        return wire
    spec, pieces = dict(wire), wire[MARK]
    del spec[MARK]
    if not isinstance(pieces, dict):
        raise ValueError("a tokenizer's pieces are not a map")
    for field, parts in pieces.items():
        if field not in _LARGE or not isinstance(parts, list) or not parts:
            raise ValueError(f"a tokenizer's field {str(field)[:20]!r} is not a list of pieces")
        decoded = [_unpiece(p) for p in parts]
        if all(isinstance(d, dict) for d in decoded):
            spec[field] = {}
            for d in decoded:  # C loops, a piece at a time
                spec[field].update(d)
        elif all(isinstance(d, list) for d in decoded):
            spec[field] = []
            for d in decoded:  # a piece at a time: one C call making 262,144 tuples held
                if field == "merges":  # the GIL 0.16-0.27 s (the collector runs inside it)
                    if len(d) % 2:
                        raise ValueError("a tokenizer's merges are not pairs")
                    d = zip(d[0::2], d[1::2], strict=True)  # pairs again, as tuples
                spec[field] += d
        else:
            raise ValueError(f"a tokenizer's {field} pieces are not all maps or all lists")
    return spec
