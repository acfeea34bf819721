"""Every limit of the upload trust boundary, in one place.

The defaults fit a classroom server (one 2-core machine, thirty students). Each can be
changed without editing code through an environment variable of the same name with the
prefix ``ATTNVIZ_`` (for example ``ATTNVIZ_WORKER_MEMORY_MB=4096 make run``); the upload
size itself is ``server.maxUploadSize`` in ``.streamlit/config.toml``, read from there so
the browser and the code never disagree. docs/security.md lists them all.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]
STREAMLIT_CONFIG = ROOT / ".streamlit" / "config.toml"


def _env(name: str, default: float) -> float:
    """``ATTNVIZ_<name>`` from the environment when it is a positive number, else ``default``."""
    raw = os.environ.get(f"ATTNVIZ_{name}", "")
    try:
        value = float(raw)
    except ValueError:
        return default
    return value if value > 0 else default


def _upload_megabytes() -> int:
    """``server.maxUploadSize`` (MB) from .streamlit/config.toml; 50 if it cannot be read."""
    try:
        return int(tomllib.loads(STREAMLIT_CONFIG.read_text())["server"]["maxUploadSize"])
    except (OSError, KeyError, TypeError, ValueError, tomllib.TOMLDecodeError):
        return 50


UPLOAD_MEGABYTES = _upload_megabytes()
# The browser's uploader counts a megabyte as 10**6 bytes (Streamlit's server as 2**20):
# the smaller of the two is the limit users meet, so it is the code's limit too.
MAX_UPLOAD_BYTES = UPLOAD_MEGABYTES * 1_000_000
MAX_FILES = 4  # a ckpt.pt + meta.pkl, or up to three ONNX graphs

# What a file may ask for, checked in the worker before anything is built.
MAX_ZIP_MEMBERS = 4096  # a nanoGPT ckpt.pt holds one member per tensor (model + optimizer)
MAX_ZIP_UNCOMPRESSED = 2 * MAX_UPLOAD_BYTES  # torch stores members uncompressed
MAX_ZIP_RATIO = 100  # uncompressed / compressed size of one member
MAX_PARAMS = 50_000_000  # float32 values a model's config may ask for
MAX_ONNX_DIM = 65536  # largest declared dimension in an ONNX graph, longest context
MAX_ACTIVATION_ELEMENTS = 64 * 2**20  # float32 values of the inspect outputs at full context
MAX_FOREIGN_CONTEXT = 1024  # longest sentence a foreign ONNX graph is tried at (GPT-2's)
MAX_ONNX_NODES = 20_000  # nodes in an ONNX graph, counted on the wire before parsing
MAX_ONNX_PARTS = 100_000  # protobuf messages of any kind (the shipped inspect graph: ~2,800)
MAX_JSON_BYTES = 16 * 2**20  # a tokenizer or config JSON string
MAX_VOCAB = 262_144  # tokens in an uploaded vocabulary
MAX_MERGES = 524_288  # merges of a BPE tokenizer (Llama-3's: 280,147)
MAX_TOKEN_CHARS = 256  # characters in one vocabulary entry

# The worker process (stdlib ``resource`` limits, plus a wall-clock deadline kept by the server).
WORKER_MEMORY_BYTES = int(_env("WORKER_MEMORY_MB", 2048) * 2**20)  # address space (RLIMIT_AS)
CONVERT_TIMEOUT_S = _env("CONVERT_TIMEOUT_S", 60.0)  # checks, conversion and test runs
# Our own exporter on weights the server checked (torch import + export: ~15 s of CPU time);
# the export worker's CPU budget (its wall clock: WAIT_FACTOR times this).
EXPORT_TIMEOUT_S = _env("EXPORT_TIMEOUT_S", 180.0)
# Graphs of exported uploads kept per server, by the data they were built from
# (upload/export_cache.py: a class loading the teacher's checkpoint exports it once).
EXPORT_CACHE_BYTES = int(_env("EXPORT_CACHE_MB", 256) * 2**20)
# An uploaded model's analysis in the server holds at most this many float32 values of
# inspect outputs (a sentence is cut to the longest T that fits: the attention grows with
# layers x heads x T^2); onnxruntime's own buffers while it runs are a few times more.
SERVER_ANALYSIS_VALUES = int(_env("SERVER_ANALYSIS_MB", 64) * 2**20 / 4)
ANALYSIS_TIMEOUT_S = _env("ANALYSIS_TIMEOUT_S", 10.0)  # one analysis of an uploaded ONNX graph
WORKER_IDLE_S = _env("WORKER_IDLE_S", 600.0)  # an idle ONNX worker exits (restarted on use)
# The server's worker runs at SCHED_IDLE: time it waits for a CPU the server uses does not
# count against a request's seconds above, up to this many times them on the wall clock.
# The command line's worker (normal priority, the user's own computer) has this many times
# them plus every second it waited for a CPU (``upload.deadline.Deadline``).
WAIT_FACTOR = _env("WORKER_WAIT_FACTOR", 3.0)


def normal_priority() -> bool:
    """Whether ``ATTNVIZ_WORKER_PRIORITY=normal`` (a shared test host: ``tests/conftest.py``)
    keeps the server's background work at the normal priority: the upload workers (no
    SCHED_IDLE; ``upload/worker.py`` reads the variable itself, before it imports anything)
    and a served folder's converter (no nice 10: ``ui/served_cache.py``). Read at each call."""
    return os.environ.get("ATTNVIZ_WORKER_PRIORITY") == "normal"


def _machine_bytes() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 * 2**30


# The server's workers together (upload/budget.py): requests running at once, the sum of
# their memory caps (half the machine), and the longest wait in line before a refusal.
WORKER_SLOTS = int(_env("WORKER_SLOTS", max(2, os.cpu_count() or 2)))
WORKERS_MEMORY_BYTES = int(_env("WORKERS_MEMORY_MB", _machine_bytes() / 2 / 2**20) * 2**20)
QUEUE_WAIT_S = _env("QUEUE_WAIT_S", 300.0)
# Uploaded models open in the server at once (upload/opened.py: identical uploads share
# one), a quarter of the machine by default; past it a new upload is refused in one line.
OPEN_UPLOADS_BYTES = int(_env("OPEN_UPLOADS_MB", _machine_bytes() / 4 / 2**20) * 2**20)
MAX_REPLY_BYTES = 4 * MAX_ACTIVATION_ELEMENTS + 4 * MAX_PARAMS  # one answer's arrays (bytes)
MAX_HEADER_BYTES = 32 * 2**20  # one answer's JSON header (a vocabulary and merges)


@dataclass(frozen=True)
class Limits:
    """What one conversion may read and build; the browser's are the defaults.

    Attributes:
        file_bytes: the largest file (bytes).
        unpacked_bytes: a zip checkpoint's members unpacked, in all (bytes).
        params: float32 values a config or one tensor may ask for.
        activations: float32 values of the inspect outputs at the full context, or None
            to leave them unchecked (the command line converts a model the browser would
            refuse and says so; whoever runs the server can serve it).
    """

    file_bytes: int = MAX_UPLOAD_BYTES
    unpacked_bytes: int = MAX_ZIP_UNCOMPRESSED
    params: int = MAX_PARAMS
    activations: int | None = MAX_ACTIVATION_ELEMENTS

    def to_dict(self) -> dict:
        """Plain JSON for a worker request (``from_dict`` reads it back)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: object) -> Limits:
        """The limits a request carries; the browser's where ``data`` is not a dict of
        positive integers (and None for ``activations``).

        Raises:
            ValueError: for a field that is not a positive integer.
        """
        if not isinstance(data, dict):
            return BROWSER
        fields = {k: data.get(k, v) for k, v in asdict(BROWSER).items()}
        for key, value in fields.items():
            if not (value is None and key == "activations") and (
                type(value) is not int or value <= 0
            ):
                raise ValueError(f"limit {key} must be a positive integer")
        return cls(**fields)


BROWSER = Limits()  # every upload through the app


def local_file_limits(largest_file_bytes: int) -> Limits:
    """Limits for the command line, sized to the files its user chose on their own disk:
    any file size, its zip members unpacked up to the file's own size (torch stores them
    uncompressed), as many parameters as the file could hold at 2 bytes each (float16),
    activations unchecked. The browser's limits where they are larger."""
    size = max(int(largest_file_bytes), 1)
    return Limits(
        file_bytes=max(MAX_UPLOAD_BYTES, size),
        unpacked_bytes=max(MAX_ZIP_UNCOMPRESSED, size),
        params=max(MAX_PARAMS, size // 2),
        activations=None,
    )


def local_worker_memory(largest_file_bytes: int) -> int:
    """Address space (bytes) of a command-line worker reading a file of that size: the
    browser worker's plus five times the file (the checkpoint mapped once, its weights as
    float32 twice at most, the model built from them)."""
    return WORKER_MEMORY_BYTES + 5 * int(largest_file_bytes)


def local_cpu_seconds(largest_file_bytes: int) -> float:
    """CPU seconds for a command-line conversion: the browser's budget plus 60 s per GB."""
    return CONVERT_TIMEOUT_S + 60.0 * largest_file_bytes / 1e9
