"""The command line's checkpoints: local files of any size, read by path in a worker and
written as one upload file.

The person running ``python -m upload.convert`` chose the files on their own disk, so
the limits are sized to the files (``upload.limits.local_file_limits``), not to a
classroom's uploads; everything else is as for an upload. The files are read in the same
isolated worker (``upload/worker.py``, request ``convert_local``), pickles refused as
there, and only plain, checked data comes back. A nanoGPT ``ckpt.pt`` is memory-mapped
there (``torch.load(path, mmap=True, weights_only=True)``): of a checkpoint that also
holds its optimizer state (nanoGPT's shakespeare-char run: 129 MB for 43 MB of weights),
only the model's tensors are read. A Hugging Face folder (``upload/folders.py``) is read
and written the same way, by its own worker request.

What was read becomes ``<out>/<name>.safetensors`` (float32 weights, config, tokenizer
and training record, :func:`write_upload`), which the app's uploader accepts, and with
``onnx`` the ONNX graphs of the contract beside it.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from upload.client import Worker
from upload.errors import UploadError
from upload.files import main_file, safe_filename
from upload.folder_layout import SOURCE as FOLDER_SOURCE
from upload.limits import (
    MAX_REPLY_BYTES,
    MAX_UPLOAD_BYTES,
    local_cpu_seconds,
    local_file_limits,
    local_worker_memory,
)
from upload.load import Converted, request_conversion

SOURCES = ("nanoGPT checkpoint", "safetensors checkpoint", FOLDER_SOURCE)


@dataclass(frozen=True)
class LocalRead:
    """A local checkpoint as the worker read it.

    Attributes:
        converted: the checked config, tokenizer spec, float32 weights, training record.
        source: one of SOURCES ("nanoGPT checkpoint", "safetensors checkpoint",
            "Hugging Face folder").
        file_bytes: the size of the largest file read (bytes).
        rss_bytes: the worker's resident memory before it read the files (torch
            imported), or None where /proc is not readable.
        peak_bytes: its peak resident memory while reading and converting, or None.
    """

    converted: Converted
    source: str
    file_bytes: int
    rss_bytes: int | None
    peak_bytes: int | None


def largest_file(paths: dict[str, Path]) -> int:
    """The largest file's size in bytes.

    Raises:
        UploadError: a file that cannot be read.
    """
    sizes = []
    for path in paths.values():
        try:
            sizes.append(path.stat().st_size)
        except OSError as exc:
            raise UploadError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    return max(sizes, default=0)


def _memory(reply: dict, key: str) -> int | None:
    memory = reply.get("memory")
    value = memory.get(key) if isinstance(memory, dict) else None
    return value if type(value) is int and value >= 0 else None


def request_local(what: str, header: dict, size: int) -> LocalRead:
    """One conversion request of the command line (``header``: ``convert_local`` or
    ``convert_folder``) to a one-shot worker with limits sized to its largest file of
    ``size`` bytes: address space (``local_worker_memory``), CPU seconds
    (``local_cpu_seconds``), parameters (``local_file_limits``); the reply checked as an
    upload's is (``upload.load.request_conversion``). The worker runs at normal priority
    and its wall clock follows the CPU it gets (``Worker(background=False)``).

    Raises:
        UploadError: the worker's one-line refusal, or WorkerError.
    """
    limits = local_file_limits(size)
    worker = Worker(
        what,
        local_worker_memory(size),
        reply_bytes=MAX_REPLY_BYTES + 4 * limits.params,
        background=False,  # the user's own computer: normal priority (upload.client)
    )
    header = {**header, "limits": limits.to_dict()}
    reply, converted = request_conversion(worker, header, local_cpu_seconds(size), limits)
    source = reply.get("source")
    return LocalRead(
        converted=converted,
        source=source if source in SOURCES else "",
        file_bytes=size,
        rss_bytes=_memory(reply, "rss_bytes"),
        peak_bytes=_memory(reply, "peak_bytes"),
    )


def read_local(paths: dict[str, Path]) -> LocalRead:
    """Checkpoint files by name -> path (a nanoGPT ``ckpt.pt`` with its ``meta.pkl`` or
    ``tokenizer.json``, or our ``.safetensors``), read in a one-shot worker with limits
    sized to the largest file (:func:`request_local`).

    Raises:
        UploadError: a file that cannot be read, the worker's one-line refusal, or
            WorkerError.
    """
    header = {
        "op": "convert_local",
        "paths": {name: str(path.resolve()) for name, path in paths.items()},
    }
    return request_local(" + ".join(paths), header, largest_file(paths))


def mb(n: int) -> str:
    """``n`` bytes as "12.3 MB" (decimal megabytes)."""
    return f"{n / 1e6:,.1f} MB"


@dataclass(frozen=True)
class Written:
    """What a conversion wrote and measured.

    Attributes:
        path: the upload file (``<out>/<name>.safetensors``).
        graphs: the ONNX graphs written beside it (``onnx``), else empty.
        parameters: the model's distinct parameters.
        read: how the worker read the input (:class:`LocalRead`: sizes, memory; its
            weights dropped once the model was built from them).
        browser_refusal: why the app's uploader would refuse the file, or "".
    """

    path: Path
    graphs: list[Path]
    parameters: int
    read: LocalRead
    browser_refusal: str


def browser_refusal(path: Path, cfg) -> str:
    """Why the app's uploader would refuse the converted file at ``path`` (its size, or a
    config beyond the upload's parameter and activation limits), or ""."""
    from upload.sizes import check_config_size

    size = path.stat().st_size
    if size > MAX_UPLOAD_BYTES:
        return f"{mb(size)}, over the browser's upload limit of {mb(MAX_UPLOAD_BYTES)}"
    try:
        check_config_size(path.name, cfg)
    except UploadError as exc:
        return str(exc).removeprefix(f"{path.name}: refused: ")
    return ""


def convert_files(
    paths: dict[str, Path],
    out: Path,
    onnx: bool = False,
    progress: bool | None = None,
    context: int | None = None,
) -> Written:
    """Local checkpoint files (name -> path) -> ``out/<name>.safetensors`` (and its ONNX
    graphs with ``onnx``; the context cut to ``context`` tokens, :func:`with_context`):
    :func:`read_local`, then :func:`write_upload`.

    Raises:
        UploadError: a refused input (one line), or WorkerError.
    """
    read = lambda: read_local(paths)  # noqa: E731
    return write_upload(read, main_file(paths), out, onnx, progress, context)


def with_context(read: LocalRead, context: int | None, name: str) -> LocalRead:
    """``read`` with its model's context shortened to ``context`` tokens (None: as it
    is): ``context_length`` set, a learned position embedding (``wpe.weight``, (P, C))
    cut to its first ``context`` rows, the original length kept in the training record
    as ``context_from`` (the model card says so). Every other weight is unchanged, so
    the shortened model computes exactly what the original computes on the first
    ``context`` tokens. Sizes the app must hold grow with T·V and L·H·T²
    (``upload.sizes.activation_elements``): a shorter context is how a model with a long
    one becomes an upload.

    Raises:
        UploadError: a context below 1 or longer than the model's.
    """
    cfg, spec, weights, training = read.converted
    if context is None or context == cfg.context_length:
        return read
    if not 0 < context < cfg.context_length:
        raise UploadError(
            f"{name}: --context {context}: give a number of tokens from 1 to the model's "
            f"context of {cfg.context_length}"
        )
    if "wpe.weight" in weights:
        weights["wpe.weight"] = weights["wpe.weight"][:context]  # (context, C)
    record = {**training, "context_from": training.get("context_from", cfg.context_length)}
    shorter = dataclasses.replace(cfg, context_length=context)
    return dataclasses.replace(read, converted=Converted(shorter, spec, weights, record))


def write_upload(
    read: Callable[[], LocalRead],
    name: str,
    out: Path,
    onnx: bool = False,
    progress: bool | None = None,
    context: int | None = None,
) -> Written:
    """``read()`` (a worker's reading of local files) -> ``out/<stem of name>.safetensors``
    (and its ONNX graphs with ``onnx``: True for all, "inspect" for the inspect graph
    alone; its context cut to ``context`` tokens,
    :func:`with_context`), with a progress bar on stderr (``progress``: None shows it on
    a terminal only) through reading, converting, writing and exporting.

    Raises:
        UploadError: a refused input (one line), or WorkerError.
    """
    stages = ["reading in an isolated worker", "converting", "writing"]
    stages += ["exporting ONNX graphs"] if onnx else []
    with tqdm(total=len(stages), unit="stage", disable=None if progress is None else not progress,
              file=sys.stderr, bar_format="{desc}{n}/{total} stages |{bar}| {elapsed}") as bar:  # fmt: skip
        bar.set_description(stages[0])
        done = with_context(read(), context, name)
        bar.update()
        bar.set_description(stages[1])
        path, graphs, model = _write(done, name, out, bar, stages, onnx)
        bar.set_description("done")
    return Written(path, graphs, model.num_parameters(), done, browser_refusal(path, model.cfg))


def _write(read: LocalRead, name: str, out: Path, bar, stages: list[str], onnx=False):
    """Build the model from the checked data, write the upload file (and the graphs)."""
    import torch

    from models.checkpoint import build_model, save_checkpoint
    from upload.tokenizer_spec import build

    cfg, spec, weights, training = read.converted
    tokenizer = build(spec)
    model = build_model(cfg, {k: torch.from_numpy(v) for k, v in weights.items()}, name)
    weights.clear()  # the model holds its own copy: the received arrays go before the export
    bar.update()
    bar.set_description(stages[2])
    stem = safe_filename(name, "")
    path = out / f"{stem}.safetensors"
    record = {**training, "converted_from": training.get("converted_from", name)}
    save_checkpoint(path, model, tokenizer, record)
    bar.update()
    graphs = []
    if len(stages) > 3:
        from export.graphs import export_model

        bar.set_description(stages[3])
        graphs = export_model(model, out, tokenizer, prefix=stem, inspect_only=onnx == "inspect")
        bar.update()
    return path, graphs, model
