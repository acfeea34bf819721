"""The two ways an upload can fail, both a ``ValueError`` with a one-line message."""

from __future__ import annotations


class UploadError(ValueError):
    """An uploaded file was refused; the message says which file, what is wrong and,
    where there is something to do, what to do."""


class WorkerError(UploadError):
    """The worker that handles an upload died, ran out of time or memory, or answered
    out of protocol; the message says which, in one line. The server and every other
    session go on; the next request starts a fresh worker."""
