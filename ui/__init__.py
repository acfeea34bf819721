import inference  # noqa: F401 - turns onnxruntime's telemetry off before it is imported
