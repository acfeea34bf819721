"""A bounded cache shared by every session of the server that computes each key once.

``st.cache_data`` and ``st.cache_resource`` hash every argument and read the
function's signature on every call (about 0.5-0.8 ms a call on the 2-core CPU); a
rerun of the visualizer asks for three to six figures, so the figure specs live
here instead, under a plain tuple key, in one object held by ``st.cache_resource``.
As in Streamlit's caches, a session asking for a key that another session is
computing waits for that result instead of computing it again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable


class SharedCache:
    """Least-recently-used cache of at most ``max_entries`` values, safe across threads.

    With ``max_bytes`` and ``size`` (value -> bytes) it also holds at most ``max_bytes``
    in all, except that the newest value is kept whatever its size (a served model's
    analysis at its full context may alone be larger than the budget; recomputing it on
    every rerun would cost more than holding it). ``on_evict()`` runs after values were
    dropped (outside the lock): ``inference.memory.release_freed`` gives their memory
    back to the operating system.

    Values are shared by every caller: they must never be modified.
    """

    def __init__(
        self,
        max_entries: int,
        max_bytes: int | None = None,
        size: Callable[[object], int] | None = None,
        on_evict: Callable[[], object] | None = None,
    ) -> None:
        self.max_entries = max_entries
        self.max_bytes, self._size, self._on_evict = max_bytes, size, on_evict
        self._bytes: dict[Hashable, int] = {}
        self._values: OrderedDict = OrderedDict()
        self._lock = threading.Lock()  # guards _values and _computing
        self._computing: dict[Hashable, threading.Lock] = {}

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._values

    @property
    def nbytes(self) -> int:
        """Bytes held, as ``size`` measures them (0 without ``size``)."""
        with self._lock:
            return sum(self._bytes.values())

    def keys(self) -> list:
        """The keys held, least recently used first."""
        with self._lock:
            return list(self._values)

    def _lookup(self, key: Hashable) -> tuple[bool, object]:
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                return True, self._values[key]
        return False, None

    def get(self, key: Hashable, compute: Callable[[], object]) -> object:
        """The value under ``key``, computed by ``compute()`` on the first request.

        Raises:
            whatever ``compute`` raises (nothing is stored then).
        """
        found, value = self._lookup(key)
        if found:
            return value
        evicted, dropped = False, None
        with self._lock:
            busy = self._computing.setdefault(key, threading.Lock())
        with busy:  # one computation per key; the others wait here
            found, value = self._lookup(key)
            if found:
                return value
            try:
                value = compute()
                nbytes = self._size(value) if self._size is not None else 0
                with self._lock:
                    self._values[key] = value
                    self._bytes[key] = nbytes
                    while len(self._values) > self.max_entries or (
                        len(self._values) > 1
                        and self.max_bytes is not None
                        and sum(self._bytes.values()) > self.max_bytes
                    ):
                        oldest, dropped = self._values.popitem(last=False)
                        self._bytes.pop(oldest, None)
                        evicted = True
                del dropped
            finally:
                with self._lock:
                    self._computing.pop(key, None)
        if evicted and self._on_evict is not None:
            self._on_evict()
        return value

    def clear(self) -> None:
        """Forget every value."""
        with self._lock:
            self._values.clear()
            self._bytes.clear()
