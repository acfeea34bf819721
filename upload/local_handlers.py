"""The upload worker's requests of the command line: local files read by path (worker side).

``convert_local``: checkpoint files (a nanoGPT ``ckpt.pt`` with its vocabulary, or our
``.safetensors``) converted as an upload is (``upload.handlers.convert``), a checkpoint
memory-mapped. ``convert_folder``: a Hugging Face folder
(``upload/formats/hf_gpt2.py``). Both come only from the command line
(``upload/local.py``, ``upload/folders.py``), never from the app: the paths are files
their user chose on their own disk, read with ``header["limits"]`` sized to them
(``upload.limits.local_file_limits``). Each reply's ``memory`` says what this process
held: ``rss_bytes`` before reading (torch imported) and ``peak_bytes``
(``upload.memory``). ``fold_onnx``: one .onnx graph and its external data folded into
one self-contained graph (``upload/onnx_fold.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from upload.handlers import convert, weights_reply
from upload.limits import Limits

Reply = tuple[dict, dict[str, np.ndarray]]


def _measured(header: dict, read: Callable[[Limits], Reply]) -> Reply:
    """``read(limits)`` with the header's limits, its reply's ``memory`` added."""
    import torch  # noqa: F401 - imported before the reading is measured

    from upload import memory

    limits = Limits.from_dict(header.get("limits"))
    before = memory.reset_peak()
    reply, weights = read(limits)
    reply["memory"] = {"rss_bytes": before, "peak_bytes": memory.peak()}
    return reply, weights


def convert_local(header: dict) -> Reply:
    """``header["paths"]`` (name -> absolute path of a file its user chose) converted as
    ``upload.handlers.convert`` does; a checkpoint is memory-mapped, so only the tensors
    the model needs are read.

    Raises:
        UploadError: naming the file and the problem; ValueError: a request without paths.
    """
    paths = header.get("paths")
    if not isinstance(paths, dict) or not all(isinstance(p, str) for p in paths.values()):
        raise ValueError("convert_local needs paths")
    files = {str(n): Path(p) for n, p in paths.items()}
    return _measured(header, lambda limits: convert(files, limits))


def convert_folder(header: dict) -> Reply:
    """``header["folder"]`` (the absolute path of a Hugging Face folder its user chose)
    read by ``upload.formats.hf_folder.read_folder``: the reply of a conversion
    (``upload.handlers.weights_reply``), its training record where it came from.

    Raises:
        UploadError: naming the file and the problem; ValueError: no absolute path.
    """
    from upload.folder_layout import SOURCE
    from upload.formats.hf_folder import read_folder

    folder = header.get("folder")
    if not isinstance(folder, str) or not Path(folder).is_absolute():
        raise ValueError("convert_folder needs an absolute folder path")
    name = f"{Path(folder).name}/"
    training = {"source": SOURCE, "converted_from": name}

    def read(limits: Limits) -> Reply:
        cfg, spec, state = read_folder(Path(folder), limits)
        return weights_reply(cfg, state, spec, training, SOURCE, name)

    return _measured(header, read)


def fold_onnx(header: dict) -> Reply:
    """``header["paths"]`` (one name -> the absolute path of an .onnx graph its user
    chose) -> the graph with its external data folded in, checked as an upload
    (``upload.onnx_fold.fold_external_data``), as the uint8 array ``graph``.

    Raises:
        UploadError: naming the file and the problem; ValueError: not one absolute path.
    """
    from upload.onnx_fold import fold_external_data

    paths = header.get("paths")
    if not isinstance(paths, dict) or len(paths) != 1:
        raise ValueError("fold_onnx needs one path")
    (path,) = paths.values()
    if not isinstance(path, str) or not Path(path).is_absolute():
        raise ValueError("fold_onnx needs an absolute path")
    graph = fold_external_data(Path(path))
    return {"bytes": len(graph)}, {"graph": np.frombuffer(graph, np.uint8)}
