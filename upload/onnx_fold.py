"""Fold an ONNX graph's external data into one self-contained file (worker side).

``torch.onnx.export``'s dynamo exporter writes the weights beside the graph by default
(``model.onnx`` + ``model.onnx.data``), which an upload cannot carry. The command line
(``python -m upload.convert model.onnx --out DIR``, request ``fold_onnx`` of
``upload/worker.py``) reads the graph by path in the isolated worker, reads each external
tensor's bytes from a regular file in the graph's own folder (no absolute path, no
``..``, no link leading out of it; offset and length within the file, the length the
tensor's dims need), puts them into the graph and checks the result as an upload is
checked (``upload.onnx_checks.check_graph``, the upload's size limit included).
"""

from __future__ import annotations

import math
from pathlib import Path, PurePosixPath

import onnx

from upload.errors import UploadError
from upload.onnx_checks import check_graph
from upload.onnx_parse import check_parts, itemsize, parse_graph, tensors
from upload.sizes import check_file_size


def _external(model: onnx.ModelProto) -> list[tuple[onnx.TensorProto, str]]:
    return [
        (t, label)
        for t, label in tensors(model)
        if t.data_location == onnx.TensorProto.EXTERNAL or len(t.external_data)
    ]


def _source(folder: Path, info: dict, label: str, name: str) -> Path:
    """The file a tensor's ``location`` names, inside ``folder``.

    Raises:
        UploadError: no location, an absolute one, ``..``, or a file outside ``folder``.
    """
    location = info.get("location", "")
    parts = PurePosixPath(location.replace("\\", "/")).parts
    target = (folder / location).resolve() if location else folder
    if not location or PurePosixPath(location).is_absolute() or ".." in parts:
        raise UploadError(f"{name}: tensor '{label}' points to {location!r}, not beside the graph")
    if not target.is_relative_to(folder) or not target.is_file():
        raise UploadError(
            f"{name}: tensor '{label}' points to {location!r}, which is not a file in {folder}"
        )
    return target


def _span(t: onnx.TensorProto, info: dict, size: int, label: str, name: str) -> tuple[int, int]:
    """(offset, length) of a tensor's bytes in a file of ``size`` bytes."""
    want = math.prod(t.dims) * itemsize(t.data_type)
    try:
        offset = int(info.get("offset", 0))
        length = int(info.get("length", want))
    except ValueError:
        raise UploadError(f"{name}: tensor '{label}' has a bad offset or length") from None
    if offset < 0 or length != want or offset + length > size:
        raise UploadError(
            f"{name}: tensor '{label}' asks for bytes {offset}..{offset + length} of a "
            f"{size}-byte file; its dims need {want} bytes"
        )
    return offset, length


def fold_external_data(path: Path) -> bytes:
    """The graph at ``path`` with every external tensor's bytes read into it: one
    self-contained .onnx, checked as an upload is (``check_graph``).

    Raises:
        UploadError: naming the file: a graph or data too large for an upload (the
            upload's limit, ``MAX_UPLOAD_BYTES``, on the result), data outside the graph's
            folder or not where the tensor says, or any check an upload fails.
    """
    name, folder = path.name, path.parent.resolve()
    check_file_size(name, path.stat().st_size)
    data = path.read_bytes()
    model = parse_graph(name, data)
    check_parts(name, model)
    external = _external(model)
    total = len(data) + sum(math.prod(t.dims) * itemsize(t.data_type) for t, _ in external)
    check_file_size(f"{name} with its weights folded in", total)
    for t, label in external:
        info = {e.key: e.value for e in t.external_data}
        source = _source(folder, info, label, name)
        offset, length = _span(t, info, source.stat().st_size, label, name)
        with source.open("rb") as f:
            f.seek(offset)
            t.raw_data = f.read(length)
        del t.external_data[:]
        t.data_location = onnx.TensorProto.DEFAULT
    folded = model.SerializeToString()
    del model
    check_graph(folded, name)
    return folded
