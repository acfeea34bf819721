"""A local Hugging Face GPT-2-family folder -> one upload file and ONNX graphs (server side).

``python -m upload.convert path/to/gpt2 --out DIR`` and the server's own models
(``streamlit run app.py -- --model DIR``, ``ui/served.py``) read a folder as
``save_pretrained`` writes it: ``config.json``, ``model.safetensors`` or
``pytorch_model.bin``, and ``tokenizer.json``. Only the names of its files are looked
at here; the files themselves are read in an isolated worker (``upload/worker.py``,
request ``convert_folder``; ``upload/formats/hf_gpt2.py``) with limits sized to the folder
its user chose (``upload.limits.local_file_limits``): no code in them runs, and only a
checked config, tokenizer spec and float32 weights come back. This side builds our
model from them, writes our ``.safetensors`` (weights, config and tokenizer in one file,
as for every other checkpoint) and, when asked, the ONNX graphs of the contract.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path

from models.config import ModelConfig
from upload.errors import UploadError
from upload.limits import (
    MAX_REPLY_BYTES,
    MAX_UPLOAD_BYTES,
    Limits,
    local_cpu_seconds,
    local_file_limits,
    local_worker_memory,
)

CONFIG = "config.json"
TOKENIZER = "tokenizer.json"
WEIGHTS = ("model.safetensors", "pytorch_model.bin")  # the first one found is read
SOURCE = "GPT-2-family folder"
NEEDS = (
    f"a GPT-2-family folder needs {CONFIG}, {WEIGHTS[0]} or {WEIGHTS[1]}, and {TOKENIZER} "
    "(model.save_pretrained(DIR) and tokenizer.save_pretrained(DIR) write them)"
)


def folder_files(folder: Path) -> dict[str, Path]:
    """The files of a GPT-2-family folder that are read: ``config.json``,
    ``tokenizer.json`` and one weights file (``model.safetensors`` first), by name.

    Raises:
        UploadError: one line: not a folder, or which files are missing and what a
            folder needs ("gpt2/: missing tokenizer.json; a GPT-2-family folder needs
            ..."); sharded weights are named as such.
    """
    if not folder.is_dir():
        raise UploadError(f"{folder.name or folder}: not a folder; {NEEDS}")
    weights = next((n for n in WEIGHTS if (folder / n).is_file()), None)
    missing = [n for n in (CONFIG, TOKENIZER) if not (folder / n).is_file()]
    if weights is None:
        sharded = any((folder / f"{n}.index.json").is_file() for n in WEIGHTS)
        missing.insert(1, f"{WEIGHTS[0]} (sharded weights are not read)" if sharded else
                       f"{WEIGHTS[0]} or {WEIGHTS[1]}")  # fmt: skip
    if missing:
        raise UploadError(f"{folder.name}/: missing {' and '.join(missing)}; {NEEDS}")
    return {n: folder / n for n in (CONFIG, TOKENIZER, weights)}


@dataclass(frozen=True)
class FolderRead:
    """A GPT-2-family folder as the worker read it and this side checked it.

    Attributes:
        cfg: our config; spec: the tokenizer spec (kind "bpe").
        weights: float32 arrays by our parameter names (a tied ``lm_head.weight`` left out).
        file_bytes: the weights file's size; peak_bytes: the worker's peak resident
            memory while reading (None where /proc is not readable).
    """

    cfg: ModelConfig
    spec: dict
    weights: dict
    file_bytes: int
    peak_bytes: int | None


def folder_limits(files: dict[str, Path]) -> Limits:
    """The limits of a folder's conversion, sized to its weights file."""
    return local_file_limits(max(p.stat().st_size for p in files.values()))


def read_folder(folder: Path) -> FolderRead:
    """A GPT-2-family folder read in a one-shot worker (``convert_folder``) with limits
    sized to it: address space, CPU seconds and parameters grow with its weights file.
    The reply's config and spec are checked here, and its arrays bounded by that config
    before they are read.

    Raises:
        UploadError: a missing file (:func:`folder_files`), the worker's one-line
            refusal, or WorkerError.
    """
    from upload.client import Worker
    from upload.load import checked_config

    files = folder_files(folder)
    size = max(p.stat().st_size for p in files.values())
    limits = folder_limits(files)
    what = f"{folder.name}/"
    worker = Worker(
        what, local_worker_memory(size), reply_bytes=MAX_REPLY_BYTES + 4 * limits.params
    )
    checked: dict = {}

    def expect(reply: dict):
        checked["cfg"], checked["spec"] = checked_config(reply, what, limits)
        budget = [checked["cfg"].num_parameters()]

        def accept(name: str, shape: tuple[int, ...]) -> bool:
            budget[0] -= math.prod(shape)
            return budget[0] >= 0 and "." in name and len(name) < 200

        return accept

    header = {"op": "convert_folder", "folder": str(folder.resolve()), "limits": limits.to_dict()}
    try:
        reply, weights = worker.request(header, local_cpu_seconds(size), expect=expect)
    finally:
        worker.stop()
    memory = reply.get("memory") if isinstance(reply.get("memory"), dict) else {}
    peak = memory.get("peak_bytes")
    return FolderRead(
        checked["cfg"], checked["spec"], weights, size, peak if type(peak) is int else None
    )


def browser_refusal(path: Path, cfg: ModelConfig) -> str:
    """Why the app's uploader would refuse the converted file at ``path`` (its size over
    the upload limit, or a config beyond the upload's parameter and activation limits),
    or "" when it would accept it."""
    from upload.sizes import check_config_size

    size = path.stat().st_size
    if size > MAX_UPLOAD_BYTES:
        return f"{size / 1e6:,.1f} MB, over the browser's upload limit of {MAX_UPLOAD_BYTES / 1e6:,.0f} MB"
    try:
        check_config_size(path.name, cfg)
    except UploadError as exc:
        return str(exc).removeprefix(f"{path.name}: refused: ")
    return ""


@dataclass(frozen=True)
class FolderConversion:
    """What :func:`convert_folder` wrote.

    Attributes:
        path: the upload file ``<out>/<folder name>.safetensors``.
        graphs: the ONNX graphs beside it (inspect, fast), if asked for.
        parameters: the model's distinct parameters.
        read: the worker's reading (sizes, peak memory; its weights already dropped).
        browser_refusal: why the app's uploader would refuse ``path``, or "".
    """

    path: Path
    graphs: list[Path]
    parameters: int
    read: FolderRead
    browser_refusal: str


def convert_folder(folder: Path, out: Path, onnx: bool = True, report=print) -> FolderConversion:
    """A GPT-2-family folder -> ``out/<folder name>.safetensors`` (weights, config and
    tokenizer; ``converted_from`` in its training record) and, with ``onnx``, the inspect
    and fast graphs of the contract beside it (``export.graphs.export_model``).
    ``report(line)`` is told each step.

    Raises:
        UploadError: a refused folder (one line); ValueError: weights that do not fit
            the config (cannot happen after the worker's checks, but the model is built
            strictly all the same).
    """
    import torch

    from models.checkpoint import build_model, save_checkpoint
    from upload.load import safe_filename
    from upload.tokenizer_spec import build

    report(f"reading {folder.name}/ in an isolated worker…")
    read = read_folder(folder)
    tokenizer = build(read.spec)
    weights = {k: torch.from_numpy(v) for k, v in read.weights.items()}
    model = build_model(read.cfg, weights, f"{folder.name}/")
    del weights  # the model holds its own copy: the received arrays go before the export
    read = replace(read, weights={})
    stem = safe_filename(folder.name, "") if folder.name else "gpt2"
    path = out / f"{stem}.safetensors"
    save_checkpoint(path, model, tokenizer, {"converted_from": f"{folder.name}/", "source": SOURCE})
    graphs = []
    if onnx:
        from export.graphs import export_model

        report("exporting the ONNX graphs…")
        graphs = export_model(model, out, tokenizer, prefix=stem)
    return FolderConversion(
        path, graphs, model.num_parameters(), read, browser_refusal(path, read.cfg)
    )
