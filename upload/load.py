"""The app's single entry for uploads: files in, a runnable model out (server side).

Only names and sizes are looked at here. Every byte of a file goes to a worker
(``upload/worker.py``), which answers with plain data:

* a checkpoint (ours, nanoGPT) comes back as float32 weights, a config and a tokenizer
  spec; the server checks the config against explicit limits, each array's name and
  bytes against that config before reading them, and hands only that checked data to a
  fresh worker that runs our own exporter (``export/graphs.py``), exactly like the
  shipped models. The exported graphs are ours, so they run in the server, which never
  imports torch;
* ONNX graphs stay in their worker for good (:class:`upload.isolated.IsolatedModel`).
"""

from __future__ import annotations

import math
from pathlib import PurePath
from typing import NamedTuple

from inference.runtime import OnnxModel
from models.card import ModelCard
from models.config import ModelConfig
from upload.budget import SERVER, in_line
from upload.client import Worker
from upload.errors import UploadError, shown
from upload.export_cache import EXPORTS, export_key
from upload.files import check_files, main_file
from upload.isolated import IsolatedModel
from upload.limits import (
    BROWSER,
    CONVERT_TIMEOUT_S,
    EXPORT_TIMEOUT_S,
    MAX_PARAMS,
    WORKER_MEMORY_BYTES,
    Limits,
)
from upload.opened import check_room, open_shared, shared
from upload.sizes import check_config_size, check_foreign_size
from upload.spec_checks import check_spec
from upload.token_rows import vocab_note
from upload.tokenizer_spec import build, for_export
from upload.training_info import context_note, plain_training, training_note

FOREIGN = "ONNX (foreign)"
ONNX_SOURCES = ("ONNX", FOREIGN)  # a contract graph's, a foreign graph's
# A foreign graph's config: its activations checked by check_foreign_size instead.
FOREIGN_LIMITS = Limits(activations=None)
MAX_NOTES, MAX_NOTE_CHARS = 8, 400  # what a worker may put on a model card
GRAPH_ROLES = ("inspect", "fast", "step", "lab")  # what our exporter writes (export_model)
EXPORT_MEMORY_BYTES = 2 * WORKER_MEMORY_BYTES  # torch's export of a model at the size cap
EXPORT_FILE_BYTES = 4 * MAX_PARAMS + 2**26  # one graph holds the weights once


class Converted(NamedTuple):
    """A checkpoint as the server accepts it from a worker: checked config, tokenizer spec,
    float32 weights by our parameter names, and the plain part of its training record."""

    cfg: ModelConfig
    spec: dict
    weights: dict
    training: dict


def card(
    cfg: ModelConfig,
    parameters: int,
    source: str,
    checkpoint: str,
    spec: dict | None = None,
    notes: list[str] | None = None,
    training: dict | None = None,
) -> ModelCard:
    """The model card of an upload (the shipped models' schema, without probes): its
    config (fields the files do not tell as "unknown", ``ModelConfig.shown``),
    parameters, source format and file name, its training record (a nanoGPT run's
    iteration, best validation loss and settings), and notes: where the weights come
    from (``upload.training_info.training_note``), a context shortened when converted
    (``context_note``), ``notes`` (a worker's), and whether
    its token rows are padded beyond its tokenizer (``spec``,
    ``upload.tokenizer_spec.vocab_note``)."""
    training = training or {}
    vocab = vocab_note(spec, cfg.vocab_size) if spec else None
    shortened = context_note(training, cfg.context_length)
    notes = [training_note(training), shortened, *(notes or []), vocab]
    return ModelCard(
        checkpoint=checkpoint,
        source=source,
        config=cfg.shown(),
        parameters=parameters,
        training=training,
        notes=[n for n in notes if n],
    )


def checked_config(reply: dict, what: str, limits: Limits = BROWSER) -> tuple[ModelConfig, dict]:
    """The reply's config and tokenizer spec, checked again on the server side, the
    config's size within ``limits`` (the browser's by default) counting the outputs the
    reply names (an ONNX graph's ``outputs``; every contract output otherwise).

    Raises:
        UploadError: a config that does not build or is too large, a bad tokenizer spec.
    """
    try:
        cfg = ModelConfig.from_dict(reply.get("config"))
    except (ValueError, TypeError) as exc:
        raise UploadError(f"{what}: bad config: {exc}") from None
    outputs = reply.get("outputs")  # an ONNX graph's: only these are ever read back
    if not (isinstance(outputs, list) and all(isinstance(n, str) for n in outputs)):
        outputs = None
    check_config_size(what, cfg, limits, outputs)
    return cfg, check_spec(reply.get("tokenizer"), cfg.vocab_size, what)


def _weights_within(cfg: ModelConfig):
    """``expect`` for weights: float32 arrays of at most ``cfg.num_parameters()`` values in
    all (names and shapes are checked strictly where the model is built, by the exporter)."""
    budget = [cfg.num_parameters()]

    def accept(name: str, shape: tuple[int, ...]) -> bool:
        budget[0] -= math.prod(shape)
        return budget[0] >= 0 and "." in name and len(name) < 200

    return accept


def request_conversion(
    worker: Worker, header: dict, timeout_s: float, limits: Limits = BROWSER, blobs=None
) -> tuple[dict, Converted]:
    """One conversion request to a one-shot ``worker``: its reply header and what the
    server accepts of it (:class:`Converted`): the config and spec checked on this side
    (sizes within ``limits``), the weights bounded by the config before they are read.

    Raises:
        UploadError: the worker's refusal, or WorkerError.
    """
    checked: dict = {}

    def expect(reply: dict):
        checked["cfg"], checked["spec"] = checked_config(reply, worker.what, limits)
        return _weights_within(checked["cfg"])

    try:
        reply, weights = worker.request(header, timeout_s, blobs=blobs, expect=expect)
    finally:
        worker.stop()
    training = plain_training(reply.get("training"))
    return reply, Converted(checked["cfg"], checked["spec"], weights, training)


def convert(files: dict[str, bytes], what: str, report) -> Converted:
    """Checkpoint files through a one-shot worker: (config, tokenizer spec, float32 weights
    by our parameter names, training record), checked on this side
    (:func:`request_conversion`).

    Raises:
        UploadError: the worker's refusal, or WorkerError.
    """
    report(0.1, f"reading {what} in an isolated worker…")
    worker = _server_worker(what, report)
    return request_conversion(worker, {"op": "convert"}, CONVERT_TIMEOUT_S, blobs=files)[1]


def _server_worker(what: str, report, **limits) -> Worker:
    """A worker of the server's: its requests wait their turn in ``upload.budget.SERVER``,
    and ``report`` says the upload's place in line meanwhile."""
    on_wait = None if report is None else (lambda k: report(0.05, in_line(k)))
    return Worker(what, budget=SERVER, on_wait=on_wait, **limits)


def export(
    name: str,
    cfg: ModelConfig,
    spec: dict,
    weights: dict,
    report=None,
    key: str | None = None,
    graphs: str = "views",
) -> dict[str, bytes]:
    """Our exporter, in a fresh worker given only checked data: role -> ONNX bytes.
    ``key``: the data's ``export_key``, when the caller has it (computed otherwise).
    ``graphs``: ``"views"`` (inspect, fast, step: what an upload opens with) or ``"lab"``
    (the lab graph alone, made when a lab view first asks: ``lab_export``).

    The server itself never imports torch: neither its memory (about 250 MB) nor its GIL
    (seconds of tracing) is spent on a student's upload. The same data exported before
    by this server comes from ``upload.export_cache.EXPORTS`` instead.

    Raises:
        UploadError: weights that do not fit the config; WorkerError.
    """

    def expect(reply: dict):
        return lambda role, shape: role in GRAPH_ROLES and len(shape) == 1

    key = (key or export_key(cfg.to_dict(), spec, weights)) + ("" if graphs == "views" else ":lab")
    cached = EXPORTS.get(key)
    if cached is not None:
        return dict(cached)

    def same() -> None:
        if report is not None:
            report(0.4, "the same model is being exported for another student…")

    with EXPORTS.exporting(key, on_wait=same):
        cached = EXPORTS.get(key)  # that export has finished meanwhile
        if cached is not None:
            return dict(cached)
        worker = _server_worker(
            f"{name} (export)", report, memory_bytes=EXPORT_MEMORY_BYTES,
            file_bytes=EXPORT_FILE_BYTES, reply_bytes=len(GRAPH_ROLES) * EXPORT_FILE_BYTES,
        )  # fmt: skip
        header = {"op": "export", "name": name, "config": cfg.to_dict(), "tokenizer": spec,
                  "graphs": graphs}  # fmt: skip
        try:
            _, made = worker.request(header, EXPORT_TIMEOUT_S, arrays=weights, expect=expect)
        finally:
            worker.stop()
        want = "inspect" if graphs == "views" else "lab"
        if want not in made:
            raise UploadError(f"{name}: the exporter returned no {want} graph")
        result = {role: graph.tobytes() for role, graph in made.items()}
        EXPORTS.put(key, result)
    return dict(result)


def _export_and_open(name: str, converted: Converted, report) -> OnnxModel:
    """Export checked weights (in a worker) and open the graphs in the server: they are
    ours, built by our exporter from arrays our code checked."""
    cfg, spec, weights, training = converted
    report(0.4, "exporting to ONNX (this takes a few seconds)…")
    source = "safetensors checkpoint" if name.endswith(".safetensors") else "nanoGPT checkpoint"
    info = card(cfg, cfg.num_parameters(), source, name, spec, training=training)
    # identical uploads of other sessions share one opened model (upload/opened.py)
    exported = for_export(spec)  # the exporter's data: the word index is the server's
    key = export_key(cfg.to_dict(), exported, weights)
    if (model := shared(key, name, info)) is not None:
        return model
    check_room(name, weights)  # a server too full to open it: refused before the export
    graphs = export(name, cfg, exported, weights, report, key)
    report(0.9, "opening the graphs…")

    def lab_export() -> bytes:  # the first lab view of any session that shares the model
        return export(name, cfg, exported, weights, None, key, graphs="lab")["lab"]

    return open_shared(key, graphs, weights, name, info, spec, lab=lab_export)


def _open_isolated(files: dict[str, bytes], what: str, report) -> IsolatedModel:
    worker = _server_worker(what, report)
    report(0.2, "checking and test-running the graphs in an isolated worker…")
    try:
        reply, _ = worker.request({"op": "open"}, CONVERT_TIMEOUT_S, blobs=files)
        foreign = reply.get("source") == FOREIGN
        cfg, spec = checked_config(reply, what, FOREIGN_LIMITS if foreign else BROWSER)
        outputs = reply.get("outputs")
        if foreign:  # it returns logits and attention maps only: sized as the worker did
            check_foreign_size(what, cfg, len(outputs) - 1 if isinstance(outputs, list) else 2)
        tokenizer = build(spec)
        parameters = reply.get("parameters")
        source, notes = reply.get("source", "ONNX"), reply.get("notes", [])
        if (
            not isinstance(outputs, list)
            or not isinstance(reply.get("name"), str)
            or type(parameters) is not int
            or source not in ONNX_SOURCES
            or not _short_lines(notes)
        ):
            raise UploadError(f"{what}: the worker's answer is incomplete")
        info = card(cfg, parameters, source, what, spec, notes)
        worker.on_wait = None  # later requests (analyses) wait without a progress line
        return IsolatedModel(worker, dict(files), reply, cfg, tokenizer, info)
    except BaseException:
        worker.stop()
        raise


def _short_lines(notes: object) -> bool:
    """A worker's card notes: a list of at most MAX_NOTES short strings."""
    return (
        isinstance(notes, list)
        and len(notes) <= MAX_NOTES
        and all(isinstance(n, str) and len(n) <= MAX_NOTE_CHARS for n in notes)
    )


def load_upload(files: dict[str, bytes], progress=None):
    """Uploaded files (name -> bytes) -> a runnable model (``OnnxModel`` or ``IsolatedModel``).

    Accepts one ``.safetensors`` (ours), a nanoGPT ``.pt`` with its ``meta.pkl`` or
    ``tokenizer.json``, one to three contract ``.onnx`` graphs, or one foreign ``.onnx``
    language model with its ``tokenizer.json`` or ``meta.pkl`` (opened, like every
    graph, in its worker). ``progress(fraction, message)`` is called at each stage.
    The model's ``name`` is "upload: <file>"; its ``card`` is a
    :class:`~models.card.ModelCard` (config, parameters, source format, file name).

    Raises:
        UploadError: one line naming the file and the problem (WorkerError when the
            worker died or ran out of time or memory).
    """
    report = progress or (lambda fraction, message: None)
    report(0.0, "checking files…")
    check_files(files)
    what = " + ".join(shown(n) for n in files)  # names shown in progress lines too
    if any(PurePath(n).suffix.lower() == ".onnx" for n in files):
        model = _open_isolated(files, what, report)
    else:
        model = _export_and_open(main_file(files), convert(files, what, report), report)
    model.name = shown(model.name)  # a file's name on one line, however it was spelled
    report(1.0, "ready")
    return model
