"""The two ways an upload can fail, both a ``ValueError`` with a one-line message."""

from __future__ import annotations

import re
import unicodedata

MAX_DIGITS = 24  # a longer number in a message is named by its length
MAX_MESSAGE_CHARS = 1000
_LONG_NUMBER = re.compile(rf"\d(?:,?\d){{{MAX_DIGITS},}}")


def shown(text: object) -> str:
    """``text`` safe to show on one line anywhere (a page, the server's log, a terminal):
    control characters (newline, ESC of ANSI sequences, BEL) and the invisible formatting
    ones (right-to-left overrides, zero-width characters) as escapes (``\\x1b``,
    ``\\u202e``), a number of more than ``MAX_DIGITS`` digits as "<a number of N digits>",
    at most ``MAX_MESSAGE_CHARS`` characters."""
    escaped = "".join(
        ch.encode("unicode_escape").decode("ascii") if unicodedata.category(ch) in ("Cc", "Cf")
        else ch
        for ch in str(text)
    )  # fmt: skip

    def digits(match: re.Match) -> str:
        return f"<a number of {sum(c.isdigit() for c in match.group()):,} digits>"

    out = _LONG_NUMBER.sub(digits, escaped)
    return out if len(out) <= MAX_MESSAGE_CHARS else out[: MAX_MESSAGE_CHARS - 1] + "…"


class UploadError(ValueError):
    """An uploaded file was refused; the message says which file, what is wrong and,
    where there is something to do, what to do. The message is made safe to show
    (:func:`shown`): a file's name or a value from it cannot break the line, reorder it
    or fill the screen."""

    def __init__(self, message: object = "") -> None:
        super().__init__(shown(message))


class WorkerError(UploadError):
    """The worker that handles an upload died, ran out of time or memory, or answered
    out of protocol; the message says which, in one line. The server and every other
    session go on; the next request starts a fresh worker."""


class LibraryRefusal(UploadError):
    """A library (onnxruntime, onnx, torch, safetensors) refused an upload while it was
    read: the message is the project's own line (which file, what to do); ``detail`` is
    the library's text (its error type and message, with whatever source paths it
    names), which goes to the server's log, never to the page (issue #50)."""

    def __init__(self, message: object, exc: BaseException) -> None:
        super().__init__(message)
        self.detail = library_text(exc)


def library_text(exc: BaseException) -> str:
    """``exc`` as the server's log records it: "module.Type: message", on one line."""
    return shown(f"{type(exc).__module__}.{type(exc).__name__}: {exc}")


def library_of(exc: BaseException) -> str:
    """The top package whose code raised ``exc`` ("onnxruntime", "onnx", "torch", …;
    "Python" for a built-in exception)."""
    top = type(exc).__module__.split(".")[0]
    return "Python" if top == "builtins" else top
