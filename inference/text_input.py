"""The text a user typed, as the model will read it (no torch, no Streamlit): cut and
cleaned with every change stated (:func:`clean_text`), tokens drawn visibly
(:func:`visible`), the notice for characters a vocabulary lacks, and the closest known
words to an unknown one (:func:`suggest`). ``inference.analysis.analyze`` uses them;
the sidebar and the link reader clean text the same way.
"""

from __future__ import annotations

import time
import unicodedata
from collections import Counter

from models.word_index import word_index

MAX_CHARS = 2_000
# Unknown-word suggestions: for the first SUGGESTED_WORDS unknown words shown (what the page
# lists), while the request has spent less than SUGGEST_BUDGET_S seconds on them.
SUGGESTED_WORDS = 12
SUGGEST_BUDGET_S = 0.3


_SHOWN = {" ": "␣", "\n": "⏎", "\t": "⇥"}


def visible(token: str) -> str:
    """``token`` as drawn wherever a token is shown: a space as ``␣``, a newline as
    ``⏎``, a tab as ``⇥``, any other control character as ``\\xNN`` (``\\uNNNN``
    above 0xff), the empty string as ``∅``; everything else as it is."""
    out = []
    for ch in token:
        if ch in _SHOWN:
            out.append(_SHOWN[ch])
        elif unicodedata.category(ch) == "Cc":
            out.append(ch.encode("unicode_escape").decode("ascii"))
        else:
            out.append(ch)
    return "".join(out) or "∅"


class EmptyInput(ValueError):
    """The text has no tokens (empty or whitespace-only)."""


def clean_text(text: str) -> tuple[str, list[str]]:
    """Cut to ``MAX_CHARS`` and drop invisible control characters; newlines and tabs
    stay (a character model reads them as tokens). Returns (text, notices): every change
    is stated."""
    notices = []
    if len(text) > MAX_CHARS:
        notices.append(f"Input cut to its first {MAX_CHARS:,} of {len(text):,} characters.")
        text = text[:MAX_CHARS]
    kept = "".join(
        ch for ch in text if ch in "\t\n" or not unicodedata.category(ch).startswith("C")
    )
    if len(kept) != len(text):
        notices.append(f"Removed {len(text) - len(kept)} invisible control character(s).")
    return kept, notices


def left_out_notice(left_out: list[str]) -> str | None:
    """The notice for characters a character vocabulary lacks, or None when there are none:
    each distinct character as drawn (:func:`visible`), with its count."""
    if not left_out:
        return None
    counts = Counter(left_out)
    shown = ", ".join(
        f"“{visible(ch)}”" + (f" ×{n}" if n > 1 else "") for ch, n in list(counts.items())[:20]
    )
    more = f" and {len(counts) - 20} more" if len(counts) > 20 else ""
    return (
        f"Left out {len(left_out)} character(s) the model's vocabulary does not have: "
        f"{shown}{more}."
    )


def suggest(tokenizer, words: list[str]) -> dict[str, list[str]]:
    """Every word of ``words`` (unknown words shown) -> up to 3 closest known words, found
    for the first ``SUGGESTED_WORDS`` of them until ``SUGGEST_BUDGET_S`` seconds are spent
    (the others get none): the cost of a request does not grow with its unknown words nor,
    past the one-off index (``models.tokenizer.word_index``), with the vocabulary."""
    out: dict[str, list[str]] = dict.fromkeys(words, [])
    if not out:
        return out
    index = word_index(tokenizer)
    start = time.monotonic()
    for word in list(out)[:SUGGESTED_WORDS]:
        if time.monotonic() - start > SUGGEST_BUDGET_S:
            break
        out[word] = index.closest(word)
    return out
