"""Torch-free inference: onnxruntime sessions of the exported graphs (``runtime``), the
arrays behind every view (``analysis``), head statistics on attention arrays
(``head_stats``), and the measurements the live complexity lesson and the bench share
(``measure``: timing, memory probes, scaling; ``decode`` and ``generation``: timed
greedy decoding). Imports neither torch nor Streamlit.
"""

import os

# onnxruntime's telemetry (its 1DS client) queues every session's events -- uploaded
# file names, graph names, error messages -- in ~/.cache/Microsoft/DeveloperTools/
# .onnxruntime/onnxruntime.db. It reads this variable when it is imported (its Python
# disable_telemetry_events() leaves the database written): every package of ours that
# can import onnxruntime imports this one first, and the upload workers inherit it
# (docs/security.md, "onnxruntime's telemetry").
os.environ["ORT_DISABLE_TELEMETRY"] = "1"
