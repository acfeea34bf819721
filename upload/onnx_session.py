"""The onnxruntime session an uploaded graph runs in (in the upload worker): the contract's
graphs (``upload/handlers.py``) and foreign graphs (``upload/onnx_foreign.py``) alike."""

from __future__ import annotations


def upload_session(data: bytes):
    """An onnxruntime session of an uploaded graph's bytes: CPU, one thread, no log, no arena.

    Raises:
        onnxruntime's errors for bytes it cannot load (the callers checked them first).
    """
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1  # one core for uploads; the server keeps the other
    options.inter_op_num_threads = 1
    options.log_severity_level = 4
    options.enable_cpu_mem_arena = False
    return ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
