"""The upload trust boundary: everything that touches a user's file lives here.

The invariant (docs/security.md): nothing derived from a user's file is parsed or
executed in the server process, except arrays and numbers that our own code checked
against explicit limits and turned into a graph our own exporter built.

Server side (imported by the app): ``load`` (the entry point), ``client`` (starts and
talks to workers), ``protocol`` (the bounded wire format), ``isolated`` (an uploaded
ONNX graph that runs only in its worker), ``tokenizer_spec`` (tokenizers rebuilt by our
code), ``limits`` and ``errors``.
Worker side (imported only inside the worker process): ``worker``, ``intake`` (sizes,
formats, zips), ``pickles`` (plain unpickling, ``torch.load``), ``formats/`` (our
safetensors, nanoGPT), ``onnx_checks``, ``onnx_contract``. ``convert`` is the command line.
"""

import inference  # noqa: F401 - turns onnxruntime's telemetry off before it is imported
