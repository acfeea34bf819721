"""Uploaded checkpoints opened once per server by what they were built from (server side).

The teacher shares one checkpoint and thirty students upload it: each session used to
open its own onnxruntime sessions and keep its own weights (about 170 MB a session for
nanoGPT's shakespeare-char model). Models built from identical checked data (the
export cache's key, ``upload.export_cache.export_key``) now share one :class:`Opened`:
its onnxruntime sessions, tokenizer and weights. Each session gets its own small
:class:`~inference.runtime.OnnxModel` (its own name and card) that holds the shared
part; when the last session holding it lets go (closes the tab, uploads another file),
the shared part is freed.

Distinct uploads are bounded in all by ``OPEN_UPLOADS_BYTES``: past it, a new one is
refused in one line, and the models already open keep working.
"""

from __future__ import annotations

import dataclasses
import threading
import weakref

from inference.runtime import OnnxModel, load_graphs
from models.card import ModelCard
from upload.errors import UploadError
from upload.limits import OPEN_UPLOADS_BYTES
from upload.tokenizer_spec import build

# How much an open graph costs beside its bytes: onnxruntime holds a model's weights
# about 1.5 times (measured on GPT-2 small's size, ui/served.py).
SESSION_FACTOR = 1.5


class Opened:
    """What sessions that uploaded identical data share: the opened graphs (``model``,
    an :class:`OnnxModel`), the float32 weights and their estimated bytes."""

    def __init__(self, model: OnnxModel, weights: dict, nbytes: int):
        self.model, self.weights, self.nbytes = model, weights, nbytes


_OPEN: weakref.WeakValueDictionary[str, Opened] = weakref.WeakValueDictionary()
_LOCK = threading.Lock()
# Set when a shared model was freed: the server then hands the freed heap back to the
# system (ui.server_start's sweep, inference.memory.release_freed); glibc otherwise kept
# a 262,144-word upload's 400 MB resident after its students had left (issue #25).
FREED = threading.Event()


def open_bytes() -> int:
    """Estimated bytes of every uploaded model open in this server now."""
    with _LOCK:
        return sum(o.nbytes for o in _OPEN.values())


def open_shared(
    key: str,
    graphs: dict[str, bytes],
    weights: dict,
    name: str,
    card: ModelCard,
    spec=None,
    lab=None,
) -> OnnxModel:
    """A session's model of the graphs exported from the data hashed as ``key``: the
    shared :class:`Opened` when one is open, else newly opened (``weights``, float32 by our
    parameter names, kept for the lessons; ``spec``, the checked tokenizer spec the graphs
    were exported with, builds the tokenizer instead of the graphs' JSON copy of it;
    ``lab``, a function making the lab graph's bytes when a lab view first asks, shared by
    every session of the model: ``inference.runtime.LazyGraph``). Its ``name`` is
    "upload: <name>".

    Raises:
        UploadError: when opening it would take the uploads open in this server past
            ``OPEN_UPLOADS_BYTES``.
    """
    with _LOCK:
        opened = _OPEN.get(key)  # another session may have opened it meanwhile
        if opened is None:
            nbytes = int(SESSION_FACTOR * sum(map(len, graphs.values())))
            nbytes += sum(w.nbytes for w in weights.values())
            _refuse_past_budget(name, nbytes)
            tokenizer = None if spec is None else build(spec)
            model = load_graphs(graphs["inspect"], graphs.get("fast"), graphs.get("step"), name,
                                tokenizer=tokenizer, lab=graphs.get("lab", lab))  # fmt: skip
            opened = _OPEN[key] = Opened(model, weights, nbytes)
            weakref.finalize(opened, FREED.set)
    return _own(opened, name, card)


def check_room(name: str, weights: dict) -> None:
    """Refuse, before its export (seconds of a worker's CPU), an upload that cannot fit
    in ``OPEN_UPLOADS_BYTES`` even at its smallest: its weights plus one graph holding
    them (:func:`open_shared` checks again with the exported graphs' real size).

    Raises:
        UploadError: the same line as :func:`open_shared`'s refusal.
    """
    with _LOCK:
        _refuse_past_budget(
            name, int((1 + SESSION_FACTOR) * sum(w.nbytes for w in weights.values()))
        )


def _refuse_past_budget(name: str, nbytes: int) -> None:
    """Raise the one-line refusal when ``nbytes`` more would take the open uploads past
    ``OPEN_UPLOADS_BYTES`` (the caller holds ``_LOCK``)."""
    held = sum(o.nbytes for o in _OPEN.values())
    if held + nbytes > OPEN_UPLOADS_BYTES:
        raise UploadError(
            f"{name}: the server holds {held / 2**20:,.0f} MB of other students' "
            f"uploaded models and this one needs {nbytes / 2**20:,.0f} MB more "
            f"(limit {OPEN_UPLOADS_BYTES / 2**20:,.0f} MB); try again when some "
            "have closed their tabs, or ask the teacher to serve it (make run MODEL=…)"
        )


def shared(key: str, name: str, card: ModelCard) -> OnnxModel | None:
    """A session's model of the data hashed as ``key`` when another session has it open
    (no conversion's export or opening needed), else None."""
    with _LOCK:
        opened = _OPEN.get(key)
    return None if opened is None else _own(opened, name, card)


def _own(opened: Opened, name: str, card: ModelCard) -> OnnxModel:
    """This session's model: its own name and card; sessions, tokenizer, config and
    weights those of ``opened``, which it keeps alive."""
    own = dataclasses.replace(opened.model, name=f"upload: {name}", card=card)
    own.weights = opened.weights
    own.shared = opened  # the shared part lives as long as some session's model does
    return own
