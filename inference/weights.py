"""A checkpoint's weights read without torch: ``.safetensors`` mapped from the file."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

_SAFETENSORS_DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64}


def mapped_weights(path: Path) -> dict[str, np.ndarray]:
    """The tensors of one of our own ``.safetensors`` checkpoints as read-only numpy arrays
    mapped from the file (``np.memmap``): nothing is copied, and a page is read only when
    something touches it (GPT-2 small: 500 MB of weights, of which the merged-form
    lesson reads one layer's projections).

    Raises:
        ValueError: a header that is not a safetensors header of known dtypes.
    """
    with Path(path).open("rb") as f:
        size = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(size))
    header.pop("__metadata__", None)
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + size)
    arrays = {}
    for name, entry in header.items():
        if entry.get("dtype") not in _SAFETENSORS_DTYPES:
            raise ValueError(f"{Path(path).name}: {name} has dtype {entry.get('dtype')!r}")
        start, end = entry["data_offsets"]
        dtype = _SAFETENSORS_DTYPES[entry["dtype"]]
        arrays[name] = data[start:end].view(dtype).reshape(entry["shape"])
    return arrays
