"""Models the server's operator serves beside the shipped ones, for every session.

``make run MODEL=path/to/gpt2`` runs ``streamlit run app.py -- --model path/to/gpt2``
(``--model`` repeatable): each folder is a Hugging Face folder, too large
for a browser upload (GPT-2 small: 500 MB, context 1024), trusted by whoever starts the
server. Each one is converted once, outside the server process (``python -m
upload.convert DIR --out ... --onnx --inspect-only`` in a child process, the inspect
graph only: its files are read in the isolated upload worker, our exporter writes the
graph; the server never imports torch),
into a cache on disk keyed by a SHA-256 of the folder's files (a changed folder is
converted again), then opened like the shipped models. Conversion runs in a background
thread: the shipped models answer meanwhile, and a folder that cannot be converted is
one line in the server log and one notice in the app.

A model key comes from the folder's name (``gpt2``, ``distilgpt2``), never one of the
shipped keys or ``upload``: it is the Model radio's option and the URL's ``model=``.
Memory stays bounded however many students use such a model: one analysis of a served
model runs at a time (:data:`AT_ONCE`), analyses keep no ``scores`` (one head's are
computed from its q and k when the mask view draws them) and no logits beside the
probabilities, and the caches of analyses and figures are bounded by bytes
(``ui.loaders``, ``ui.specs``).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from inference.runtime import OnnxModel, load_graphs
from inference.weights import mapped_weights
from models.card import ModelCard
from models.config import SHIPPED_KINDS
from ui.served_cache import cache_root, convert_into, remove_stale
from upload.folder_layout import SOURCE
from upload.folders import CACHE_VERSION, folder_digest  # noqa: F401 - the cache key
from upload.token_rows import vocab_note

RESERVED = (*SHIPPED_KINDS, "upload", "upload2")  # keys a served model never takes
AT_ONCE = 1  # analyses, probes and generations of served models running at the same time
_RUNS = threading.BoundedSemaphore(AT_ONCE)


def megabytes(variable: str, default: float) -> int:
    """``$variable`` in MB as bytes when it is a positive number, else ``default`` MB."""
    try:
        value = float(os.environ.get(variable, ""))
    except ValueError:
        value = default
    return int((value if value > 0 else default) * 2**20)


# Analyses of served models kept per server (at least the newest one, whatever its size):
# GPT-2 small at T = 1024 keeps about 1 GB (attn 604 MB, probabilities 206 MB, q/k/v and
# head outputs 151 MB), at T = 64 about 25 MB.
ANALYSIS_CACHE_BYTES = megabytes("ATTNVIZ_SERVED_ANALYSES_MB", 1024)
FIGURE_CACHE_BYTES = megabytes("ATTNVIZ_SERVED_FIGURES_MB", 256)  # their figures' specs


def _app_args(argv: list[str] | None) -> argparse.Namespace:
    """``--model`` (repeatable) and ``--context`` of the script's arguments (``streamlit
    run app.py -- --model DIR ...``: Streamlit sets ``sys.argv`` to ``[app.py, --model,
    DIR, ...]``). Arguments of another program (a test runner that runs the app in its
    own process) are not the app's: none then."""
    argv = sys.argv if argv is None else argv
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--model", action="append", type=Path, default=[])
    parser.add_argument("--context", type=_positive, default=None)
    if not argv or Path(argv[0]).name != "app.py":
        return parser.parse_args([])
    return parser.parse_known_args(argv[1:])[0]


def _positive(text: str) -> int | None:
    """A positive ``--context``; None (the folder's own) for anything else."""
    return int(text) if text.isascii() and text.isdecimal() and int(text) > 0 else None


def served_folders(argv: list[str] | None = None) -> list[Path]:
    """The folders after ``--model`` in the app's arguments (``make run MODEL=DIR``)."""
    return _app_args(argv).model


def served_context(argv: list[str] | None = None) -> int | None:
    """``--context N`` of the app's arguments (``make run MODEL=DIR CONTEXT=N``): every
    served folder is converted with its first N positions (``upload.convert --context``),
    or None (each folder's own context)."""
    return _app_args(argv).context


def model_key(folder: Path, taken: set[str]) -> str:
    """The key of a served folder: its name in lower case, ``[a-z0-9_.-]`` only, never
    one of :data:`RESERVED` or ``taken`` (a number is added: ``gpt2-2``)."""
    name = folder.resolve().name if folder.name in ("", ".", "..") else folder.name
    base = re.sub(r"[^a-z0-9_.-]+", "-", name.lower()).strip("-.") or "model"
    key, n = base, 1
    while key in RESERVED or key in taken:
        n += 1
        key = f"{base}-{n}"
    return key


class ServedModel(OnnxModel):
    """An ``OnnxModel`` whose runs take turns (:data:`AT_ONCE` at a time, per server):
    thirty students on GPT-2 small at T = 1024 hold one analysis's memory, not thirty."""

    def inspect(self, ids, names=None):
        """``OnnxModel.inspect``, in turn."""
        with _RUNS:
            return super().inspect(ids, names)

    def logits(self, ids):
        """``OnnxModel.logits``, in turn."""
        with _RUNS:
            return super().logits(ids)

    # ``generate`` is OnnxModel's: a softmax model reruns ``logits`` for every new token,
    # so each token takes its own turn.


@dataclass
class Entry:
    """One served folder: its key, its state (``converting`` until it is ``ready`` or
    ``failed``), the model once ready, the one-line reason when it failed, and what it
    is doing while not ready (``stage``: ``waiting`` for the folders before it,
    ``checking`` the cache, ``converting`` (not in the cache: the first start), or
    ``opening`` the converted graphs) since ``since`` (``time.monotonic()``)."""

    key: str
    folder: Path
    state: str = "converting"
    model: ServedModel | None = None
    error: str = ""
    stage: str = "waiting"
    since: float = field(default_factory=time.monotonic)

    def _stage(self, stage: str) -> None:
        self.stage, self.since = stage, time.monotonic()

    def progress(self) -> str:
        """One line for every session while the model is not ready: what it is doing
        and for how long ("converting gpt2/ for this server (first start only: GPT-2
        small takes a few minutes): 1 min 20 s so far"); "" once ready or failed."""
        if self.state != "converting":
            return ""
        seconds = int(time.monotonic() - self.since)
        took = f"{seconds // 60} min {seconds % 60} s" if seconds >= 60 else f"{seconds} s"
        what = {
            "waiting": "waiting for the models before it",
            "checking": "looking for its conversion in the cache",
            "converting": "converting it for this server (first start only: GPT-2 small "
            "takes a few minutes)",
            "opening": "opening its converted graphs (converted before)",
        }[self.stage]
        return f"{self.folder.name}/: {what}: {took} so far"


class ServedModels:
    """The server's operator models: converted (or found in the cache) by one background
    thread, one folder after another, in the order given."""

    def __init__(self, folders: list[Path], root: Path | None = None, context: int | None = None):
        self.root, self.context = root or cache_root(), context
        self.entries: dict[str, Entry] = {}
        for folder in folders:
            key = model_key(folder, set(self.entries))
            self.entries[key] = Entry(key, folder)
        self.thread = threading.Thread(target=self._prepare_all, name="served-models", daemon=True)
        if self.entries:
            self.thread.start()

    def ready(self) -> list[str]:
        """Keys of the models that can be used now, in the order given."""
        return [k for k, e in self.entries.items() if e.state == "ready"]

    def get(self, key: str) -> ServedModel | None:
        entry = self.entries.get(key)
        return entry.model if entry is not None else None

    def _prepare_all(self) -> None:
        remove_stale(self.root)
        for entry in self.entries.values():
            start = time.monotonic()
            try:
                entry.model = self._prepare(entry)
                entry.state = "ready"
                _log(f"{entry.key}: serving {entry.folder} ({time.monotonic() - start:.0f} s)")
            except Exception as exc:  # noqa: BLE001 - one line in the log and the app
                entry.error = " ".join(str(exc).split())[:400] or type(exc).__name__
                entry.state = "failed"
                _log(f"{entry.key}: not served: {entry.error}")

    def _prepare(self, entry: Entry) -> ServedModel:
        """The folder's converted graphs, from the cache or converted now."""
        entry._stage("checking")
        dest = self.root / f"{entry.key}-{folder_digest(entry.folder, self.context)[:16]}"
        if not any(dest.glob("*.inspect.onnx")):
            entry._stage("converting")
            _log(f"{entry.key}: converting {entry.folder} into {dest} (first start only)…")
            convert_into(entry.folder, dest, self.context)
        entry._stage("opening")
        return open_converted(entry.key, entry.folder, dest)


_STARTED: list[ServedModels] = []  # prepared by ``python -m ui.launch`` before Streamlit


def start(folders: list[Path], context: int | None = None) -> ServedModels:
    """Start preparing ``folders`` now, in this process (``python -m ui.launch``: before
    the Streamlit server answers anyone), for :func:`shared` to hand to the app."""
    _STARTED[:] = [ServedModels(folders, context=context)]
    return _STARTED[0]


def shared(folders: list[Path], context: int | None = None) -> ServedModels:
    """The served models of this server process: the ones :func:`start` began preparing
    when the server started, if they are these folders at this context; else new ones
    (a server started by ``streamlit run`` itself prepares them on the first visit)."""
    started = _STARTED[0] if _STARTED else None
    if (
        started is not None
        and started.context == context
        and [e.folder for e in started.entries.values()] == list(folders)
    ):
        return started
    return ServedModels(folders, context=context)


def open_converted(key: str, folder: Path, dest: Path) -> ServedModel:
    """The converted inspect graph in ``dest`` opened like the shipped models, with a card
    and the checkpoint's weights memory-mapped (read only where a lesson touches them).

    The fast graph is not opened: an onnxruntime session holds a model's weights about
    1.5 times (GPT-2 small: 750 MB a session), and for softmax attention the inspect
    graph's ``logits`` are the same computation (generation at T = 256: 2.5 s a token
    instead of 1.7 s, measured on GPT-2 small's size).
    """
    inspect = next(dest.glob("*.inspect.onnx"))
    stem = inspect.name.removesuffix(".inspect.onnx")
    lab = dest / f"{stem}.lab.onnx"  # converted before the lab graph existed: none
    plain = load_graphs(inspect, None, name=f"{key} (served)", lab=lab if lab.exists() else None)
    cfg = plain.config
    note = vocab_note({"kind": "bpe", "vocab": plain.tokenizer.get_vocab()}, cfg.vocab_size)
    plain.card = ModelCard(
        checkpoint=f"{folder.name}/",
        source=SOURCE,
        config=cfg.to_dict(),
        parameters=cfg.num_parameters(),
        notes=[note] if note else [],
    )
    checkpoint = dest / f"{stem}.safetensors"
    plain.weights = mapped_weights(checkpoint) if checkpoint.exists() else None
    return ServedModel(**{f: getattr(plain, f) for f in plain.__dataclass_fields__})


def _log(line: str) -> None:
    """One line in the server's log (its terminal)."""
    print(f"[served models] {line}", file=sys.stderr, flush=True)
