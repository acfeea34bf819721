"""Load a model for the notebook API as the app loads it: a shipped kind, a converted or
nanoGPT checkpoint, a Hugging Face folder, or ONNX graphs.

Every route is the app's own loader (nothing is re-implemented here):

* ``"softmax"`` / ``"linear"`` / ``"delta"``: ``inference.runtime.load_shipped`` on
  ``exported/`` (or ``$ATTNVIZ_MODELS_DIR``), as ``make run`` serves them;
* a checkpoint (our ``.safetensors``, one ``upload.convert`` wrote, or nanoGPT's
  ``ckpt.pt`` with ``meta=`` or ``tokenizer=``) and a Hugging Face folder: read in the
  isolated upload worker and exported by ``upload.local`` / ``upload.folders`` (what
  ``attnviz convert --onnx`` runs), once: the graphs are kept in the served models' cache
  (``ui.served_cache.cache_root()``, ``~/.cache/attention-visualizer/notebook/``), keyed by
  the files' SHA-256, and opened like the shipped ones;
* our ONNX graphs (a ``.inspect.onnx``, or a folder holding one, as ``export.graphs``
  writes them): opened in this process with their fast, step and lab siblings; any other
  ``.onnx`` language model (with ``tokenizer=``): ``upload.load.load_upload``, in its
  isolated worker, as the app's uploader opens it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from inference.runtime import OnnxModel, load_graphs, load_shipped
from models import contract
from models.config import SHIPPED_KINDS
from upload.errors import UploadError
from upload.folders import CACHE_VERSION

EXPORTED = Path(__file__).resolve().parents[1] / "exported"  # as ui.loaders.EXPORTED
MODELS_DIR_VARIABLE = "ATTNVIZ_MODELS_DIR"  # the shipped models from another folder (make run's)
NOTEBOOK_CACHE = "notebook"  # under ui.served_cache.cache_root()
CHECKPOINTS = (".pt", ".pth", ".ckpt", ".safetensors")


def load_model(
    source: str | os.PathLike,
    *,
    meta: str | os.PathLike | None = None,
    tokenizer: str | os.PathLike | None = None,
    context: int | None = None,
):
    """The runnable model of ``source`` (``inference.runtime.OnnxModel``, or an
    ``upload.isolated.IsolatedModel`` for a foreign ONNX graph).

    Args:
        source: a shipped kind (``"softmax"``, ``"linear"``, ``"delta"``), a checkpoint
            file, a Hugging Face folder, a nanoGPT ``out/`` folder (its ``ckpt.pt``), a
            folder of our graphs, or an ``.onnx`` file.
        meta: nanoGPT's ``meta.pkl`` (a character vocabulary).
        tokenizer: a ``tokenizer.json`` (GPT-2's, for nanoGPT with GPT-2's vocabulary;
            a foreign ONNX model's).
        context: keep the first ``context`` positions (tokens) of a checkpoint or folder.

    Raises:
        UploadError: one line naming the file and what is wrong (a missing file, a
            refused checkpoint, a vocabulary that does not fit).
    """
    if isinstance(source, str) and source in SHIPPED_KINDS:
        return load_shipped(models_dir(), source)
    path = Path(source).expanduser()
    if not path.exists():
        kinds = ", ".join(repr(k) for k in SHIPPED_KINDS)
        raise UploadError(f"{source}: no such file or folder, nor a shipped kind ({kinds})")
    extra = {n: Path(p).expanduser() for n, p in (("meta", meta), ("tokenizer", tokenizer)) if p}
    if path.is_dir():
        return _folder(path, extra, context)
    if path.name.endswith(".onnx"):
        return _onnx(path, extra)
    if path.suffix.lower() in CHECKPOINTS:
        return _converted(path, extra, context)
    raise UploadError(f"{path.name}: not a checkpoint ({', '.join(CHECKPOINTS)}), an .onnx "
                      "graph or a folder")  # fmt: skip


def models_dir() -> Path:
    """Where the shipped models are read: ``$ATTNVIZ_MODELS_DIR`` when set (as the app
    reads it), else the tree's ``exported/``."""
    return Path(os.environ.get(MODELS_DIR_VARIABLE) or EXPORTED)


def open_graphs(inspect: Path) -> OnnxModel:
    """Our graphs ``<stem>.inspect.onnx`` and their siblings (``.fast``, ``.step``,
    ``.lab``, ``.safetensors``) opened in this process: ``load_shipped`` when the fast
    graph is there (as ``export.graphs`` writes them), else the inspect graph with what
    there is (``upload.convert --inspect-only``).

    Raises:
        ValueError: an inspect graph without our ``config`` and ``tokenizer`` metadata.
    """
    folder, stem = inspect.parent, inspect.name.removesuffix(".inspect.onnx")
    if (folder / contract.graph_file(stem, "fast")).exists():
        model = load_shipped(folder, stem)
    else:
        siblings = {role: folder / contract.graph_file(stem, role) for role in ("step", "lab")}
        found = {role: p for role, p in siblings.items() if p.exists()}
        model = load_graphs(inspect, None, found.get("step"), name=stem, lab=found.get("lab"))
    model.name = stem
    return model


def _folder(path: Path, extra: dict, context: int | None):
    graphs = sorted(path.glob("*.inspect.onnx"))
    if len(graphs) == 1:
        return open_graphs(graphs[0])
    if graphs:
        names = ", ".join(g.name for g in graphs)
        raise UploadError(f"{path.name}/: holds {len(graphs)} models ({names}): give one's "
                          ".inspect.onnx file")  # fmt: skip
    if (path / "ckpt.pt").is_file():  # nanoGPT's out/ folder
        return _converted(path / "ckpt.pt", extra, context)
    from upload.folders import convert_folder, folder_digest

    digest = folder_digest(path, context)
    name = path.name if path.name else path.resolve().name
    return _cached(name, digest, lambda out: convert_folder(path, out, True, False, context))


def _converted(path: Path, extra: dict, context: int | None):
    """A checkpoint file (with its vocabulary file) converted and exported once."""
    from upload.local import convert_files

    files = {path.name: path} | {p.name: p for p in extra.values()}
    digest = hashlib.sha256(f"attnviz notebook {CACHE_VERSION} {context}\n".encode())
    for name, file in sorted(files.items()):
        digest.update(f"{name}\n".encode())
        with file.open("rb") as f:
            while chunk := f.read(1 << 22):
                digest.update(chunk)
    return _cached(
        path.stem, digest.hexdigest(), lambda out: convert_files(files, out, True, False, context)
    )


def _cached(name: str, digest: str, convert) -> OnnxModel:
    """The graphs of ``convert(out)`` from the cache, converted into it first if absent
    (a half-written conversion never looks done: it is renamed into place)."""
    from ui.served_cache import cache_root

    dest = cache_root() / NOTEBOOK_CACHE / f"{name}-{digest[:16]}"
    if not any(dest.glob("*.inspect.onnx")):
        tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        try:
            convert(tmp)
            shutil.rmtree(dest, ignore_errors=True)
            tmp.rename(dest)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return open_graphs(next(dest.glob("*.inspect.onnx")))


def _onnx(path: Path, extra: dict):
    """Our inspect graph (opened here), or any other ONNX language model: the app's
    uploader's route (``upload.load.load_upload``, in an isolated worker)."""
    if path.name.endswith(".inspect.onnx"):
        return open_graphs(path)
    from upload.load import load_upload

    files = {p.name: p.read_bytes() for p in (path, *extra.values())}
    return load_upload(files)
