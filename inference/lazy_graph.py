"""A graph opened on first use (the lab graph: ``inference/runtime.py``, ``upload/load.py``)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import onnxruntime as ort

from inference.sessions import make_session


class LazyGraph:
    """A graph opened on first use, once, and shared by every copy of the model that holds
    it (an upload's sessions each hold a copy: ``upload/opened.py``). ``source``: a path,
    the graph's bytes, or a function that makes them (an upload's lab graph is exported
    only when a lab view first asks for it)."""

    def __init__(self, source: str | Path | bytes | Callable[[], bytes]):
        self._source, self._session = source, None
        self._lock = threading.Lock()

    @property
    def opened(self) -> bool:
        """True once the session is open."""
        return self._session is not None

    def session(self) -> ort.InferenceSession:
        """The session, opened (and the graph made) on the first call.

        Raises:
            whatever making the graph raises (an upload's export: UploadError).
        """
        with self._lock:
            if self._session is None:
                src = self._source() if callable(self._source) else self._source
                self._session = make_session(Path(src) if isinstance(src, str) else src)
            return self._session
