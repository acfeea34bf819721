"""The command line's checkpoints: local files of any size, read by path in a worker.

The person running ``python -m upload.convert`` chose the files on their own disk, so
the limits are sized to the files (``upload.limits.local_file_limits``), not to a
classroom's uploads; everything else is as for an upload. The files are read in the same
isolated worker (``upload/worker.py``, request ``convert_local``), pickles refused as
there, and only plain, checked data comes back. A nanoGPT ``ckpt.pt`` is memory-mapped
there (``torch.load(path, mmap=True, weights_only=True)``): of a checkpoint that also
holds its optimizer state (nanoGPT's shakespeare-char run: 129 MB for 43 MB of weights),
only the model's tensors are read.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from upload.client import Worker
from upload.errors import UploadError
from upload.limits import (
    MAX_REPLY_BYTES,
    local_cpu_seconds,
    local_file_limits,
    local_worker_memory,
)
from upload.load import Converted, request_conversion


@dataclass(frozen=True)
class LocalRead:
    """A local checkpoint as the worker read it.

    Attributes:
        converted: the checked config, tokenizer spec, float32 weights, training record.
        source: "nanoGPT checkpoint" or "safetensors checkpoint".
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


def _sizes(paths: dict[str, Path]) -> int:
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


def read_local(paths: dict[str, Path]) -> LocalRead:
    """Checkpoint files by name -> path (a nanoGPT ``ckpt.pt`` with its ``meta.pkl`` or
    ``tokenizer.json``, or our ``.safetensors``), read in a one-shot worker with limits
    sized to the largest file: address space (``local_worker_memory``), CPU seconds
    (``local_cpu_seconds``), parameters (``local_file_limits``).

    Raises:
        UploadError: a file that cannot be read, the worker's one-line refusal, or
            WorkerError.
    """
    size = _sizes(paths)
    limits = local_file_limits(size)
    what = " + ".join(paths)
    worker = Worker(
        what,
        local_worker_memory(size),
        reply_bytes=MAX_REPLY_BYTES + 4 * limits.params,
    )
    header = {
        "op": "convert_local",
        "paths": {name: str(path.resolve()) for name, path in paths.items()},
        "limits": limits.to_dict(),
    }
    reply, converted = request_conversion(worker, header, local_cpu_seconds(size), limits)
    source = reply.get("source")
    return LocalRead(
        converted=converted,
        source=source if source in ("nanoGPT checkpoint", "safetensors checkpoint") else "",
        file_bytes=size,
        rss_bytes=_memory(reply, "rss_bytes"),
        peak_bytes=_memory(reply, "peak_bytes"),
    )
