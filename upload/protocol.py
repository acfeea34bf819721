"""The wire format between the server and an upload worker: small, typed and bounded.

One message is ``8-byte little-endian header length | JSON header | payload``. The header
is a JSON object; its ``arrays`` list names each array of the payload in order,
``{"name", "dtype", "shape"}`` (dtype float32, int64 or uint8), and its ``blobs`` list names raw
byte strings that follow the arrays (``{"name", "size"}``: uploaded files, from server to
worker only). The reader checks the header's size, every array's dtype and shape (against
what the caller expects, *before* anything is allocated) and the payload's total size,
and reads with a deadline, so a worker that lies, stalls or dies costs the server a
bounded amount of memory and time. A header's tokenizer spec travels in JSON pieces
(``upload/spec_wire.py``), decoded one at a time.
"""

from __future__ import annotations

import json
import math
import os
import select
import time
from collections.abc import Callable

import numpy as np

from upload.errors import WorkerError
from upload.spec_wire import from_wire, to_wire

DTYPES = {"float32": np.float32, "int64": np.int64, "uint8": np.uint8}
_LENGTH = 8
_ENCODER = json.JSONEncoder(separators=(",", ":"))


def encode(header: dict, arrays: dict[str, np.ndarray] | None = None, blobs=None) -> list:
    """The chunks of one message (bytes-like; write them in order).

    ``arrays`` are sent C-contiguous in their own dtype (float32, int64 or uint8 only);
    ``blobs`` maps names to bytes.
    """
    arrays, blobs = arrays or {}, blobs or {}
    listed = []
    for name, a in arrays.items():
        if a.dtype.name not in DTYPES:
            raise TypeError(f"{name}: dtype {a.dtype} cannot be sent")  # float32/int64/uint8
        listed.append({"name": name, "dtype": a.dtype.name, "shape": list(a.shape)})
    header = {
        **header,
        **({"tokenizer": to_wire(header["tokenizer"])} if "tokenizer" in header else {}),
        "arrays": listed,
        "blobs": [{"name": n, "size": len(b)} for n, b in blobs.items()],
    }
    # json's pure-Python encoder (iterencode): the C one (json.dumps) holds the GIL for
    # the whole header, 0.26 s for a 262,144-word vocabulary, and the server's other
    # sessions wait that long (issue #25); this one lets them run between its pieces.
    text = "".join(_ENCODER.iterencode(header)).encode()
    chunks = [len(text).to_bytes(_LENGTH, "little"), text]
    chunks += [memoryview(np.ascontiguousarray(a)).cast("B") for a in arrays.values()]
    return chunks + [memoryview(b) for b in blobs.values()]


Deadline = float | Callable[[], float] | None


def _wait(fd: int, deadline: Deadline, write: bool = False) -> None:
    """Return once ``fd`` is readable (writable); raise WorkerError("timeout") at the deadline.

    A callable deadline is asked again whenever the wait reaches it, so it may move
    (``upload/client.py`` moves it by the time the worker did not get a CPU).
    """
    while True:
        left = (deadline() if callable(deadline) else deadline) - time.monotonic()
        if left <= 0:
            raise WorkerError("timeout")
        if select.select([] if write else [fd], [fd] if write else [], [], left)[:2] != ([], []):
            return


def write(fd: int, header: dict, arrays=None, blobs=None, deadline: Deadline = None) -> None:
    """Write one message to the file descriptor ``fd``: blocking, or, with a ``deadline``
    (see ``read_exact``), to a non-blocking ``fd`` in the pieces the reader takes in time.

    Raises:
        WorkerError: "timeout" at the deadline.
    """
    for chunk in encode(header, arrays, blobs):
        view = memoryview(chunk)
        while view:
            if deadline is not None:
                _wait(fd, deadline, write=True)
            try:
                view = view[os.write(fd, view) :]
            except BlockingIOError:  # the reader took less than select promised
                continue


def read_exact(fd: int, n: int, deadline: Deadline) -> bytearray:
    """Exactly ``n`` bytes from ``fd`` before ``deadline``: ``time.monotonic()`` seconds,
    or a function returning them (asked again when reached), or None (no deadline).

    Raises:
        WorkerError: "timeout" at the deadline; "ended" at end of file.
    """
    buf = bytearray(n)
    view, got = memoryview(buf), 0
    while got < n:
        if deadline is not None:
            _wait(fd, deadline)
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            raise WorkerError("ended")
        view[got : got + len(chunk)] = chunk
        got += len(chunk)
    return buf


def read_header(fd: int, deadline: Deadline, max_bytes: int) -> dict:
    """The JSON header of the next message, at most ``max_bytes`` long.

    Raises:
        WorkerError: too long, unreadable, nested, not an object, or timeout/ended.
    """
    size = int.from_bytes(read_exact(fd, _LENGTH, deadline), "little")
    if size > max_bytes:
        raise WorkerError(f"protocol: a header of {size:,} bytes (limit {max_bytes:,})")
    try:
        header = json.loads(read_exact(fd, size, deadline))
        if isinstance(header, dict) and "tokenizer" in header:
            header["tokenizer"] = from_wire(header["tokenizer"])
    except (ValueError, RecursionError):
        raise WorkerError("protocol: an unreadable header") from None
    if not isinstance(header, dict) or not isinstance(header.get("arrays", []), list):
        raise WorkerError("protocol: the header is not an object")
    return header


def read_payload(
    fd: int,
    header: dict,
    deadline: Deadline,
    max_bytes: int,
    expect: Callable[[str, tuple[int, ...]], bool] | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, bytes]]:
    """The arrays and blobs the header announces, checked before they are read.

    Args:
        expect: (name, declared shape) -> whether the reader accepts that array; called
            for each array in order, before any payload is read. Omit to accept any
            (the worker side, reading the server's own requests).
        max_bytes: the most the payload may hold in all.

    Raises:
        WorkerError: an array ``expect`` refuses, a dtype other than float32/int64/uint8, more than ``max_bytes`` in all, or timeout/ended.
    """
    specs, total = [], 0
    for item in header.get("arrays", []):
        try:
            name, dtype = str(item["name"]), DTYPES[item["dtype"]]
            shape = tuple(int(d) for d in item["shape"])
        except (KeyError, TypeError, ValueError):
            raise WorkerError("protocol: a malformed array entry") from None
        if any(d < 0 for d in shape) or (expect is not None and not expect(name, shape)):
            raise WorkerError(f"protocol: an unexpected array '{name[:40]}' of shape {shape[:8]}")
        size = math.prod(shape) * np.dtype(dtype).itemsize
        specs.append((name, dtype, shape, size))
        total += size
    blobs = [(str(b["name"]), int(b["size"])) for b in header.get("blobs", [])]
    total += sum(max(size, 0) for _, size in blobs)
    if total > max_bytes or any(size < 0 for _, size in blobs):
        raise WorkerError(f"protocol: a payload of {total:,} bytes (limit {max_bytes:,})")
    arrays = {
        name: np.frombuffer(read_exact(fd, size, deadline), dtype).reshape(shape)
        for name, dtype, shape, size in specs
    }
    return arrays, {name: bytes(read_exact(fd, size, deadline)) for name, size in blobs}
