"""onnxruntime sessions: opening a graph on the best provider that loads, running it with
errors turned into one readable line, and its metadata (no torch import).

CUDA is asked for only when onnxruntime lists it, and ``session.get_providers()`` tells
what really runs (a missing CUDA library falls back to CPU silently, with logging turned
down so a CPU machine's terminal stays clean).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import onnxruntime as ort

ort.set_default_logger_severity(4)  # no CUDA-library error spam on CPU-only machines


def quiet_onnxruntime() -> None:
    """onnxruntime's telemetry events off in this process (``ORT_DISABLE_TELEMETRY``, set
    by ``inference/__init__.py`` before onnxruntime was imported, keeps its queue from
    being written; this turns off the events it would send)."""
    ort.disable_telemetry_events()


quiet_onnxruntime()


class ModelRunError(RuntimeError):
    """onnxruntime failed while running a model on an input; the message is short and
    readable ("indices element out of data bounds, idx=5000 ..."), never a traceback."""


def short_error(message: str, limit: int = 300) -> str:
    """onnxruntime's error text without its "[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION :"
    prefix and the "Non-zero status code ... Status Message:" preamble; first line,
    at most ``limit`` characters."""
    message = re.sub(r"^(\w+: )?\[ONNXRuntimeError\] : \d+ : \w+ : ", "", message.strip())
    message = re.sub(
        r"^Non-zero status code returned while running (\w+) node\. Name:'[^']*' "
        r"Status Message: ",
        r"\1: ",
        message,
    )
    message = re.sub(r"\S+\.(?:cc|cpp|h):\d+ [^\n]*?\) ", "", message)  # source location
    first = message.strip().splitlines()[0] if message.strip() else "unknown error"
    return first[:limit]


def run_session(session: ort.InferenceSession, names, feed: dict) -> list[np.ndarray]:
    """``session.run`` with onnxruntime's errors turned into :class:`ModelRunError`."""
    try:
        return session.run(names, feed)
    except Exception as exc:  # onnxruntime's error types derive from Exception only
        raise ModelRunError(short_error(str(exc))) from exc


def requested_providers() -> list[str]:
    """CUDA first when this onnxruntime build lists it, CPU always."""
    available = ort.get_available_providers()
    wanted = ["CUDAExecutionProvider"] if "CUDAExecutionProvider" in available else []
    return wanted + ["CPUExecutionProvider"]


def make_session(model: str | Path | bytes) -> ort.InferenceSession:
    """An InferenceSession on the best provider that actually loads.

    The CPU memory arena is off: with many classroom sessions running at once the
    arena grows to the peak of all concurrent runs and never gives memory back,
    while these models' tensors are small enough for plain malloc.

    The intra-op threads do not spin after a run: spinning kept both cores busy
    between runs (a linear analysis at T = 64, T + 1 short runs, cost 130-140 ms of
    CPU instead of 40-50 ms, measured), CPU that the other sessions' reruns need.
    """
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.enable_cpu_mem_arena = False
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    source = str(model) if isinstance(model, Path) else model
    return ort.InferenceSession(source, options, providers=requested_providers())


def graph_metadata(session: ort.InferenceSession) -> dict[str, str]:
    """The graph's metadata_props as a dict."""
    return dict(session.get_modelmeta().custom_metadata_map)
