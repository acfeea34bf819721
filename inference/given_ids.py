"""A sentence given as token ids rather than text (no torch, no Streamlit): a generated
continuation is analysed with its ids exactly as the model made them.

A byte-level BPE model can spell the text of its own ids otherwise when that text is
tokenized again (a word it generated in two pieces reads back as one merged token; a
character cut between two tokens decodes to U+FFFD and encodes back as other bytes), so
the views would show a sentence the model never produced. ``inference.analysis.analyze``
takes the ids from :func:`given_encoding` instead of tokenizing the text.
"""

from __future__ import annotations

from collections.abc import Sequence

from models.tokenizer import Encoded, encode, token_text


def given_encoding(tokenizer, text: str, ids: Sequence[int], vocab_size: int) -> Encoded:
    """``ids`` (T,) as an :class:`~models.tokenizer.Encoded`: each token's text as
    :func:`models.tokenizer.token_text` gives it when the text is typed (a byte-level
    token ending inside a UTF-8 character as ``\\xNN``, never U+FFFD), none unknown.
    An id past the tokenizer's entries (a padded row) reads ``[id N]``.

    Raises:
        ValueError: if an id is not an integer in [0, ``vocab_size``).
    """
    ids = [int(i) for i in ids]
    bad = [i for i in ids if not 0 <= i < vocab_size]
    if bad:
        raise ValueError(f"token id {bad[0]} is outside the model's vocabulary of {vocab_size} ids")
    tokens = []
    for i in ids:
        piece = tokenizer.id_to_token(i)
        tokens.append(f"[id {i}]" if piece is None else token_text(tokenizer, piece))
    return Encoded(ids, tokens, [False] * len(ids), [])


def retokenized_notice(tokenizer, text: str, ids: Sequence[int]) -> str | None:
    """One line when ``text`` tokenized again is not ``ids`` (where they part), else None."""
    again = encode(tokenizer, text).ids
    if list(again) == list(ids):
        return None
    at = next((i for i, (a, b) in enumerate(zip(again, ids, strict=False)) if a != b),
              min(len(again), len(ids)))  # fmt: skip
    return (
        f"These are the {len(ids)} token ids as generated. Typed again, this text "
        f"tokenizes to {len(again)} token{'s' if len(again) != 1 else ''}, other ids "
        f"from position {at} on; type the sentence anew to see those."
    )
