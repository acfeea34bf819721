"""Next-token predictions as the app lists them (no torch, no Streamlit): the k most
likely next tokens at every position (:func:`top_next_columns`) and the text of every id
(:func:`id_to_token`, or :class:`TokenTexts`, made as they are asked for).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from inference.runtime import OnnxModel
from models.tokenizer import token_text, vocab_of


def top_next_columns(probs: np.ndarray, vocab: list[str], k: int) -> dict[str, list]:
    """The ``k`` most likely next tokens at every position, most likely first (ties in
    id order), as table columns ``#r next`` and ``p #r`` for r = 1 .. k.

    Each row's k-th largest probability is found by partition (O(V)); only the ids at or
    above it are sorted, so GPT-2's (1024, 50257) takes a fraction of a second, not the
    4 s of sorting every row.

    Args:
        probs: (T, V) next-token probabilities; vocab: id -> token string (>= V entries).

    Returns:
        Column name -> T values (token strings, probabilities as float).
    """
    top = _top_ids(probs, k)  # (T, k) most likely next ids
    columns: dict[str, list] = {}
    for r in range(top.shape[1]):
        columns[f"#{r + 1} next"] = [vocab[int(i)] for i in top[:, r]]
        columns[f"p #{r + 1}"] = [float(probs[t, i]) for t, i in enumerate(top[:, r])]
    return columns


def _top_ids(probs: np.ndarray, k: int) -> np.ndarray:
    """(T, min(k, V)) ids of each row's largest values, largest first, ties in id order:
    the first k of a stable ``argsort(-probs)``."""
    T, V = probs.shape
    k = min(k, V)
    kth = np.partition(probs, V - k, axis=1)[:, V - k]  # (T,) each row's k-th largest
    top = np.empty((T, k), dtype=np.int64)
    for t in range(T):
        ids = np.flatnonzero(probs[t] >= kth[t])  # (>= k,) in id order
        top[t] = ids[np.argsort(-probs[t, ids], kind="stable")[:k]]
    return top


def id_to_token(model: OnnxModel) -> list[str]:
    """The text of every id (index = id; byte-level BPE tokens decoded, ``token_text``);
    an id no token maps to (a padded vocabulary's extra rows) as ``[id N]``."""
    vocab = vocab_of(model.tokenizer)
    out = [f"[id {i}]" for i in range(max(model.config.vocab_size, len(vocab)))]
    for token, i in vocab.items():
        out[i] = token_text(model.tokenizer, token)
    return out


class TokenTexts(Sequence):
    """:func:`id_to_token`'s list, each entry made when first read and kept (index = id),
    through ``shown`` (e.g. ``inference.text_input.visible``). A view shows a few tokens of
    a vocabulary; the whole list of 262,144 took 0.5-1 s of the server's interpreter,
    shared with every session (issue #25). A slice is a view of the same entries.

    Args:
        model: its tokenizer's ``id_to_token`` gives each id's token (None: a padded
            vocabulary's extra row, shown as ``[id N]``).
        shown: token text -> what is drawn.
    """

    def __init__(self, model: OnnxModel, shown: Callable[[str], str] = str, ids=None, kept=None):
        size = max(model.config.vocab_size, len(vocab_of(model.tokenizer)))
        self._model, self._shown = model, shown
        self._ids = range(size) if ids is None else ids
        self._kept: dict[int, str] = {} if kept is None else kept

    def __len__(self) -> int:
        return len(self._ids)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return TokenTexts(self._model, self._shown, self._ids[index], self._kept)
        i = self._ids[index]  # IndexError past the end, as a list's
        if (text := self._kept.get(i)) is None:
            tokenizer = self._model.tokenizer
            token = tokenizer.id_to_token(i)
            text = f"[id {i}]" if token is None else token_text(tokenizer, token)
            self._kept[i] = text = self._shown(text)
        return text
