"""Graphs our exporter built, kept once per server by what they were built from.

A class often uploads the same checkpoint: the teacher shares one file and thirty
students load it. The export (torch import and tracing in a worker: about 15 s of CPU
on a 2-core machine) depends only on the checked data the server hands the exporter,
so identical data gets the identical graphs from here instead of a new export.

The key is a SHA-256 of that data (the checked config, the tokenizer spec, and every
weight's name, dtype, shape and bytes; the file's name only appears in the exporter's
error messages, and a failed export is not kept), so nothing is shared beyond what the
same data would produce anyway. The cache holds at
most ``EXPORT_CACHE_BYTES`` of graphs (least recently used first out); a set of graphs
larger than half of that is not kept. An export under way is shared too: six students
loading the teacher's file at once wait for one export, not six (:meth:`exporting`).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np

from upload.limits import EXPORT_CACHE_BYTES

CHUNK = 8192  # entries of a dict or list encoded by one json.dumps call (see _feed)


def _feed(digest, obj) -> None:
    """``obj`` (JSON data) into ``digest``, canonically (keys sorted, lengths and brackets
    marked), a large dict or list ``CHUNK`` entries at a time: one ``json.dumps`` of a
    262,144-word vocabulary holds the GIL for about a second, freezing every other
    session of the server (issue #25); between chunks their threads run."""
    if isinstance(obj, dict):
        keys = sorted(obj, key=str)
        digest.update(b"{%d" % len(keys))
        if any(isinstance(obj[k], (dict, list, tuple)) for k in keys[:CHUNK]):
            for k in keys:  # nested (a spec, a config): few keys
                digest.update(json.dumps(str(k)).encode())
                _feed(digest, obj[k])
        else:  # flat (a vocabulary: token -> id)
            for i in range(0, len(keys), CHUNK):
                part = [[str(k), obj[k]] for k in keys[i : i + CHUNK]]
                digest.update(json.dumps(part, sort_keys=True, ensure_ascii=True).encode())
        digest.update(b"}")
    elif isinstance(obj, (list, tuple)):
        digest.update(b"[%d" % len(obj))
        for i in range(0, len(obj), CHUNK):  # e.g. BPE merges: pairs of strings
            digest.update(
                json.dumps(obj[i : i + CHUNK], sort_keys=True, ensure_ascii=True).encode()
            )
        digest.update(b"]")
    else:
        digest.update(json.dumps(obj, ensure_ascii=True).encode())


def export_key(config: dict, spec: dict, weights: dict[str, np.ndarray]) -> str:
    """Hex SHA-256 of the data the exporter builds graphs from (weights in name order).
    The config and tokenizer spec are hashed in pieces (:func:`_feed`): the server's other
    sessions run while a large vocabulary is hashed."""
    digest = hashlib.sha256()
    _feed(digest, {"config": config, "tokenizer": spec})
    for key in sorted(weights):
        array = np.ascontiguousarray(weights[key])
        digest.update(json.dumps([key, array.dtype.str, list(array.shape)]).encode())
        digest.update(memoryview(array).cast("B"))
    return digest.hexdigest()


class ExportCache:
    """Thread-safe LRU of role -> ONNX bytes, bounded by total bytes.

    Args:
        capacity: bytes of graphs kept at most.
    """

    def __init__(self, capacity: int = EXPORT_CACHE_BYTES):
        self.capacity = capacity
        self._graphs: OrderedDict[str, dict[str, bytes]] = OrderedDict()
        self._lock = threading.Lock()
        self._busy: dict[str, list] = {}  # key -> [lock held while it exports, users]
        self.hits = self.misses = 0

    @property
    def size(self) -> int:
        """Bytes of graphs held now."""
        with self._lock:
            return sum(_bytes(g) for g in self._graphs.values())

    def get(self, key: str) -> dict[str, bytes] | None:
        """The graphs stored under ``key`` (now the most recently used), or None."""
        with self._lock:
            graphs = self._graphs.get(key)
            if graphs is None:
                self.misses += 1
                return None
            self._graphs.move_to_end(key)
            self.hits += 1
            return graphs

    @contextmanager
    def exporting(self, key: str, on_wait: Callable[[], None] | None = None) -> Iterator[None]:
        """Held while ``key``'s export runs: a second session asking for the same data
        waits here (``on_wait()`` is called first) and then finds its graphs, instead of
        starting the same export again."""
        with self._lock:
            busy = self._busy.setdefault(key, [threading.Lock(), 0])
            busy[1] += 1
        try:
            if not busy[0].acquire(blocking=False):
                if on_wait is not None:
                    on_wait()
                busy[0].acquire()
            try:
                yield
            finally:
                busy[0].release()
        finally:
            with self._lock:
                busy[1] -= 1
                if busy[1] == 0:
                    self._busy.pop(key, None)

    def put(self, key: str, graphs: dict[str, bytes]) -> None:
        """Keep ``graphs`` under ``key``, dropping the least recently used to fit."""
        if _bytes(graphs) > self.capacity // 2:
            return
        with self._lock:
            self._graphs[key] = graphs
            self._graphs.move_to_end(key)
            while sum(_bytes(g) for g in self._graphs.values()) > self.capacity:
                self._graphs.popitem(last=False)


def _bytes(graphs: dict[str, bytes]) -> int:
    return sum(len(b) for b in graphs.values())


EXPORTS = ExportCache()  # one per server process
