"""Export a checkpoint to self-contained ONNX graphs that follow ``models/contract.py``
(``python -m export.graphs``), and the model card writer (``card``).

Imports nothing of training: evaluation hands the card its numbers.
"""

import inference  # noqa: F401 - turns onnxruntime's telemetry off before it is imported
