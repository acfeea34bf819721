"""Give freed heap memory back to the operating system (glibc ``malloc_trim``).

A large analysis (GPT-2 small at T = 1,024: a gigabyte of arrays, and onnxruntime's
intermediate tensors while it is computed) is made of many allocations; glibc keeps the
pages of freed ones below its mmap threshold (which grows to 32 MB once large blocks are
freed) in its heaps, so a server that computes one such analysis after another grows
by each, although only one is held. ``malloc_trim(0)`` returns every free page of every
heap (``madvise(MADV_DONTNEED)``). Elsewhere (another C library) nothing is done.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import threading

_LOCK = threading.Lock()
_LIBC: list = []


def _libc():
    if not _LIBC:
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            _LIBC.append(libc if hasattr(libc, "malloc_trim") else None)
        except OSError:
            _LIBC.append(None)
    return _LIBC[0]


def release_freed(collect: bool = False) -> bool:
    """``malloc_trim(0)``: free heap pages back to the operating system; with ``collect``
    first ``gc.collect()`` (values dropped from a cache may still be held by reference
    cycles, which only the cyclic collector frees). Returns whether glibc's
    ``malloc_trim`` was there to call."""
    if collect:
        gc.collect()
    libc = _libc()
    if libc is None:
        return False
    with _LOCK:  # one trim at a time: each walks every heap
        libc.malloc_trim(0)
    return True
