"""Benchmarks of the attention visualizer: ``python -m bench --help``.

Sections: app latency, onnxruntime vs PyTorch eager, fast-graph scaling with
sequence length, autoregressive generation (recurrent step vs softmax
recomputation vs key/value cache), carried memory, and concurrent classroom
sessions on a real server and input-to-paint in a real browser. Numbers are
benchmarks, never test assertions.
"""

import inference  # noqa: F401 - turns onnxruntime's telemetry off before it is imported
