"""Graphs our exporter built, kept once per server by what they were built from.

A class often uploads the same checkpoint: the teacher shares one file and thirty
students load it. The export (torch import and tracing in a worker: about 5 s of CPU for
a model the size of the shipped ones on a 2-core machine) depends only on the checked
data the server hands the exporter, so identical data gets the identical graphs from
here instead of a new export. They are kept in a temporary folder, not in the server's
memory.

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
import os
import shutil
import tempfile
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from models.pieces import PIECE, paced, pieces
from upload.limits import EXPORT_CACHE_BYTES
from upload.tempdirs import EXPORTS_PREFIX


def _sorted_keys(obj: dict) -> list:
    """The keys of ``obj`` in a canonical order: a vocabulary (token -> distinct int ids)
    by id, any other dict by ``str`` of its keys. A vocabulary's JSON lists its tokens by
    id: that is checked in pieces (``models.pieces``) and the dict's own order kept; only
    another order is sorted (numpy, by id). Sorting 262,144 tokens as strings took 0.5 s
    of the server's Python, and one C call over them all holds the GIL 10-40 ms, while
    the class waits (issue #25)."""
    keys = list(obj)
    if len(keys) <= PIECE:
        return sorted(keys, key=str)
    values, last = list(obj.values()), -1
    for part in pieces(values):
        if set(map(type, part)) != {int}:
            return sorted(keys, key=str)
        ids = np.asarray(part, dtype=np.int64)  # (PIECE,)
        if last is not None and (ids[0] <= last or (np.diff(ids) <= 0).any()):
            last = None  # not by id: sorted below, once every id is an int
        elif last is not None:
            last = int(ids[-1])
    if last is not None:
        return keys
    ids = np.asarray(values, dtype=np.int64)  # (V,)
    if len(np.unique(ids)) < len(ids):
        return sorted(keys, key=str)
    return [keys[i] for i in np.argsort(ids, kind="stable").tolist()]


def _feed(digest, obj) -> None:
    """``obj`` (JSON data) into ``digest``, canonically (keys in :func:`_sorted_keys` order,
    lengths and brackets marked), a large dict or list in paced pieces
    (``models.pieces``): one ``json.dumps`` of a 262,144-word vocabulary holds the GIL
    0.2 s, freezing every other session of the server (issue #25)."""
    if isinstance(obj, dict):
        keys = _sorted_keys(obj)
        digest.update(b"{%d" % len(keys))
        if any(isinstance(obj[k], (dict, list, tuple)) for k in keys[:PIECE]):
            for k in keys:  # nested (a spec, a config): few keys
                digest.update(json.dumps(str(k)).encode())
                _feed(digest, obj[k])
        else:  # flat (a vocabulary: token -> id)
            for part_keys in pieces(keys):  # [token, id] pairs; zip and map loop in C
                part = list(zip(map(str, part_keys), map(obj.__getitem__, part_keys), strict=True))
                digest.update(json.dumps(part, sort_keys=True, ensure_ascii=True).encode())
        digest.update(b"}")
    elif isinstance(obj, (list, tuple)):
        digest.update(b"[%d" % len(obj))
        for part in pieces(obj):  # e.g. BPE merges: pairs of strings
            digest.update(json.dumps(part, sort_keys=True, ensure_ascii=True).encode())
        digest.update(b"]")
    else:
        digest.update(json.dumps(obj, ensure_ascii=True).encode())


def export_key(config: dict, spec: dict, weights: dict[str, np.ndarray]) -> str:
    """Hex SHA-256 of the data the exporter builds graphs from (weights in name order).
    The config and tokenizer spec are hashed in pieces (:func:`_feed`): the server's other
    sessions run while a large vocabulary is hashed. A spec decoded from a worker's
    pieces (``upload.spec_wire.WireSpec``) is hashed as those pieces, each with its
    length, as they came: the same file gives the same pieces; the same entries in
    another order give another key (a missed share, never a wrong one)."""
    digest = hashlib.sha256()
    wire = getattr(spec, "wire", None)
    if wire is not None:
        spec = {**{k: v for k, v in spec.items() if k not in wire}, "wire": sorted(wire)}
        for field in sorted(wire):
            for piece in paced(wire[field]):
                data = piece.encode()
                digest.update(b"%d:" % len(data))
                digest.update(data)
    _feed(digest, {"config": config, "tokenizer": spec})
    for key in sorted(weights):
        array = np.ascontiguousarray(weights[key])
        digest.update(json.dumps([key, array.dtype.str, list(array.shape)]).encode())
        digest.update(memoryview(array).cast("B"))
    return digest.hexdigest()


class ExportCache:
    """Thread-safe LRU of role -> ONNX bytes, bounded by total bytes, kept on disk.

    The graphs lie in a folder of their own (one file per graph), not in the server's
    memory: a class's uploads would otherwise keep up to ``capacity`` of the server's
    resident memory after the students left (issue #25). A read is the page cache's.
    The folder is made on the first :meth:`put` (``TEMP_PREFIX`` + "exports-" + this
    process's id: :func:`upload.tempdirs.remove_stale_workdirs` removes it once the
    process is gone) and removed when the cache is.

    Args:
        capacity: bytes of graphs kept at most.
    """

    def __init__(self, capacity: int = EXPORT_CACHE_BYTES):
        self.capacity = capacity
        self._sizes: OrderedDict[str, dict[str, int]] = OrderedDict()  # key -> role -> bytes
        self._folder: Path | None = None
        self._lock = threading.Lock()
        self._busy: dict[str, list] = {}  # key -> [lock held while it exports, users]
        self.hits = self.misses = 0

    @property
    def size(self) -> int:
        """Bytes of graphs held now."""
        with self._lock:
            return sum(sum(s.values()) for s in self._sizes.values())

    def get(self, key: str) -> dict[str, bytes] | None:
        """The graphs stored under ``key`` (now the most recently used), or None (also
        when their files were removed meanwhile)."""
        with self._lock:
            sizes = self._sizes.get(key)
            if sizes is not None:
                self._sizes.move_to_end(key)
        graphs = None if sizes is None else self._read(key, sizes)
        with self._lock:
            if graphs is None:
                self.misses += 1
                if sizes is not None and self._sizes.get(key) is sizes:
                    del self._sizes[key]
            else:
                self.hits += 1
        return graphs

    def _read(self, key: str, sizes: dict[str, int]) -> dict[str, bytes] | None:
        try:
            graphs = {role: (self._folder / key / role).read_bytes() for role in sizes}
        except OSError:
            return None
        return graphs if {r: len(b) for r, b in graphs.items()} == sizes else None

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
        """Keep ``graphs`` under ``key``, dropping the least recently used to fit. Not
        kept (nothing raised) when they are over half the capacity or cannot be written."""
        if _bytes(graphs) > self.capacity // 2 or not all(r.isidentifier() for r in graphs):
            return
        try:
            folder = self._make_folder()
            part = Path(tempfile.mkdtemp(dir=folder, prefix=".part-"))
            for role, graph in graphs.items():
                (part / role).write_bytes(graph)
            shutil.rmtree(folder / key, ignore_errors=True)
            part.rename(folder / key)
        except OSError:
            return
        with self._lock:
            self._sizes[key] = {role: len(graph) for role, graph in graphs.items()}
            self._sizes.move_to_end(key)
            dropped = []
            while sum(sum(s.values()) for s in self._sizes.values()) > self.capacity:
                dropped.append(self._sizes.popitem(last=False)[0])
        for old in dropped:
            shutil.rmtree(folder / old, ignore_errors=True)

    def _make_folder(self) -> Path:
        with self._lock:
            if self._folder is None:
                self._folder = Path(tempfile.mkdtemp(prefix=f"{EXPORTS_PREFIX}{os.getpid()}-"))
                weakref.finalize(self, shutil.rmtree, self._folder, True)
            return self._folder


def _bytes(graphs: dict[str, bytes]) -> int:
    return sum(len(b) for b in graphs.values())


EXPORTS = ExportCache()  # one per server process
