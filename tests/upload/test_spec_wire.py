"""A tokenizer spec crosses the worker's pipe in JSON pieces and arrives unchanged."""

from __future__ import annotations

import base64
import json
import os
import threading
import time

import pytest

from models.pieces import PIECE
from models.word_index import index_words
from upload import protocol
from upload.errors import WorkerError
from upload.export_cache import export_key
from upload.spec_wire import MARK, WireSpec, from_wire, to_wire
from upload.tokenizer_spec import for_export

SPECS = [
    {"kind": "wordpiece", "vocab": {f"w{i}é": i for i in range(3 * PIECE + 5)}, "max_input_chars_per_word": 64},
    {"kind": "char", "stoi": {"a": 0, "\n": 1, "東": 2}},
    {"kind": "bpe", "vocab": {"a": 0, "b": 1, "ab": 2, "Ġ": 3}, "merges": [["a", "b"]] * (PIECE + 1),
     "add_prefix_space": False, "special": []},
    {"kind": "bpe", "vocab": {}, "merges": [], "add_prefix_space": True, "special": []},
]  # fmt: skip


def _through_a_pipe(header: dict) -> dict:
    read, write = os.pipe()
    try:
        writer = threading.Thread(target=protocol.write, args=(write, header))
        writer.start()  # a large header fills the pipe: it is written while it is read
        got = protocol.read_header(read, time.monotonic() + 30, 2**26)
        writer.join()
        return got
    finally:
        os.close(read)
        os.close(write)


@pytest.mark.parametrize("spec", SPECS, ids=["wordpiece", "char", "bpe", "empty"])
def test_a_spec_arrives_as_it_was_sent(spec):
    wire = to_wire(spec)
    assert all(
        len(json.loads(base64.b64decode(p))) <= PIECE
        for parts in wire[MARK].values()
        for p in parts
    )
    got = _through_a_pipe({"ok": True, "tokenizer": spec})
    merges = [tuple(m) for m in spec.get("merges", [])]  # tuples: the collector skips them
    words = index_words(spec.get("vocab", spec.get("stoi")))  # ordered by the worker
    assert got["tokenizer"] == {
        **spec,
        **({"merges": merges} if "merges" in spec else {}),
        "word_index": words,
    }
    assert list(got["tokenizer"].get("vocab", {})) == list(spec.get("vocab", {}))  # id order


def test_what_is_not_a_spec_passes_unchanged_and_bad_pieces_are_a_protocol_error():
    for value in (None, "no", [1, 2], {"kind": "char"}):
        assert from_wire(to_wire(value)) == value
    json_b64 = [base64.b64encode(t.encode()).decode() for t in ("{}", "[]", "[")]
    for pieces in (
        {"vocab": json_b64[0]},  # not a list
        {"vocab": []},  # no piece
        {"other": json_b64[:1]},  # not a spec's field
        {"vocab": json_b64[:2]},  # a map and a list
        {"vocab": ["{}"]},  # not base64
        [],  # not a map
    ):
        with pytest.raises(ValueError):
            from_wire({"kind": "wordpiece", MARK: pieces})
    with pytest.raises(ValueError, match="not a pair"):
        to_wire({"kind": "bpe", "vocab": {"a": 0}, "merges": [["a", "b", "c"]]})
    odd = base64.b64encode(b'["a", "b", "c"]').decode()
    with pytest.raises(ValueError, match="not pairs"):
        from_wire({"kind": "bpe", MARK: {"merges": [odd]}})
    read, write = os.pipe()
    try:
        text = json.dumps({"ok": True, "tokenizer": {MARK: {"vocab": json_b64[2:]}}}).encode()
        os.write(write, len(text).to_bytes(8, "little") + text)
        with pytest.raises(WorkerError, match="protocol: an unreadable header"):
            protocol.read_header(read, time.monotonic() + 5, 2**20)
    finally:
        os.close(read)
        os.close(write)


def test_a_received_spec_is_sent_on_and_keyed_in_the_pieces_it_came_in():
    """The server forwards a worker's spec to the exporter without encoding it again, and
    the export key hashes its pieces: the same spec twice, the same key; one entry
    changed, another key."""
    spec = SPECS[0]
    got = _through_a_pipe({"ok": True, "tokenizer": spec})["tokenizer"]
    assert isinstance(got, WireSpec) and to_wire(got)[MARK] is got.wire
    again = _through_a_pipe({"ok": True, "tokenizer": spec})["tokenizer"]
    key = export_key({"n_layer": 1}, for_export(got), {})
    assert export_key({"n_layer": 1}, for_export(again), {}) == key
    assert "word_index" not in for_export(got).wire and "word_index" in got.wire
    changed = {**spec, "vocab": {**spec["vocab"], "w7é": 10**6}}
    other = _through_a_pipe({"ok": True, "tokenizer": changed})["tokenizer"]
    assert export_key({"n_layer": 1}, for_export(other), {}) != key
    forwarded = _through_a_pipe({"ok": True, "tokenizer": for_export(got)})["tokenizer"]
    assert forwarded == {k: v for k, v in got.items() if k != "word_index"}
