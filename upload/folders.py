"""A local Hugging Face folder -> one upload file (and ONNX graphs; server side).

``python -m upload.convert path/to/gpt2 --out DIR`` and the server's own models
(``streamlit run app.py -- --model DIR``, ``ui/served.py``) read a folder as
``save_pretrained`` writes it: ``config.json``, ``model.safetensors`` or
``pytorch_model.bin``, and ``tokenizer.json`` (``upload/folder_layout.py``). Only the
names of its files are looked at here; the files themselves are read in an isolated
worker (``upload/worker.py``, request ``convert_folder``; ``upload/formats/hf_gpt2.py``)
with limits sized to the folder its user chose (``upload.limits.local_file_limits``): no code in them runs, and only a
checked config, tokenizer spec and float32 weights come back. They are written as every
other local checkpoint is (``upload.local.write_upload``): our ``.safetensors`` (weights,
config and tokenizer in one file) and, when asked, the ONNX graphs of the contract.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from upload.folder_layout import folder_files
from upload.local import LocalRead, Written, largest_file, request_local, write_upload

CACHE_VERSION = "2"  # part of every served folder's cache key (ui/served.py): bump when
# the conversion's output changes (2: the lab graph, issue #45)


def folder_digest(folder: Path, context: int | None = None) -> str:
    """SHA-256 (hex) of :data:`CACHE_VERSION`, the ``context`` it is converted with (if
    any), and the names and bytes of the files a conversion reads (config.json,
    tokenizer.json, the weights file).

    Raises:
        UploadError: a missing file (``upload.folders.folder_files``); OSError.
    """
    digest = hashlib.sha256(f"attention-visualizer served {CACHE_VERSION}\n".encode())
    if context is not None:
        digest.update(f"context {context}\n".encode())
    for name, path in sorted(folder_files(folder).items()):
        digest.update(f"{name}\n".encode())
        with path.open("rb") as f:
            while chunk := f.read(1 << 22):
                digest.update(chunk)
    return digest.hexdigest()


def read_folder(folder: Path) -> LocalRead:
    """A Hugging Face folder read in a one-shot worker (``convert_folder``) with limits
    sized to its largest file (``upload.local.request_local``): the config and spec
    checked here, its arrays bounded by that config before they are read.

    Raises:
        UploadError: a missing file (:func:`folder_files`), the worker's one-line
            refusal, or WorkerError.
    """
    files = folder_files(folder)
    header = {"op": "convert_folder", "folder": str(folder.resolve())}
    return request_local(f"{folder.name}/", header, largest_file(files))


def convert_folder(
    folder: Path,
    out: Path,
    onnx: bool = False,
    progress: bool | None = None,
    context: int | None = None,
) -> Written:
    """A Hugging Face folder -> ``out/<folder name>.safetensors`` (weights, config and
    tokenizer; ``converted_from`` in its training record) and, with ``onnx``, the inspect
    and fast graphs of the contract beside it (``upload.local.write_upload``); with
    ``context``, its context cut to that many tokens (``upload.local.with_context``).

    Raises:
        UploadError: a refused folder (one line), or WorkerError.
    """
    folder = folder if folder.name else folder.resolve()
    read = lambda: read_folder(folder)  # noqa: E731
    return write_upload(read, f"{folder.name}/", out, onnx, progress, context)
