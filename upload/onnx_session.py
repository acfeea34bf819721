"""The onnxruntime session an uploaded graph runs in (in the upload worker): the contract's
graphs (``upload/handlers.py``) and foreign graphs (``upload/onnx_foreign.py``) alike."""

from __future__ import annotations

from upload.errors import LibraryRefusal


def upload_session(data: bytes, name: str):
    """An onnxruntime session of an uploaded graph's bytes: CPU, one thread, no log, no
    arena, no telemetry.

    Raises:
        LibraryRefusal: onnxruntime could not open the graph (``name`` is the file, for
            the line; onnxruntime's own text is its ``detail``, for the server's log).
    """
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1  # one core for uploads; the server keeps the other
    options.inter_op_num_threads = 1
    options.log_severity_level = 4
    options.enable_cpu_mem_arena = False
    try:
        return ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime's errors derive from Exception only
        raise LibraryRefusal(
            f"{name}: refused: onnxruntime {ort.__version__} could not open this graph "
            "(its message is in the server's log); check that it opens with onnxruntime "
            f"{ort.__version__} on your computer (an older exporter's opset or IR version "
            "may help), or export it with export/graphs.py",
            exc,
        ) from None
