"""Child process of ``models/onnx_contract.py``: open uploaded graphs and run them once, fenced in.

Started as ``python -I models/_trial_child.py MEMORY_BYTES CPU_SECONDS``. ``-I`` keeps
the project and the environment off ``sys.path``: this file imports only the
standard library, numpy and onnxruntime, and it limits itself (address space,
CPU time, no files written, no core dumps) *before* importing either.

stdin: one JSON line ``{"graphs": [{"size": n, "runs": [feed, ...]}, ...]}`` then the
graphs' bytes back to back. A feed maps input name -> ``{"dtype", "shape", "values"}``
(``values`` null: zeros). stdout: JSON lines, one event each: ``open`` (graph i),
``run`` (graph i, run j), ``outputs`` (name, shape, dtype, finite for each output),
``error`` (message) and finally ``done``. The arrays themselves never leave the child.
"""

import json
import resource
import sys


def _limit(memory_bytes: int, cpu_seconds: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _say(**event) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def _describe(np, value) -> dict:
    if not isinstance(value, np.ndarray):
        return {"shape": None, "dtype": type(value).__name__, "finite": False}
    finite = value.dtype.kind != "f" or bool(np.isfinite(value).all())
    return {"shape": [int(d) for d in value.shape], "dtype": str(value.dtype), "finite": finite}


def main() -> None:
    _limit(int(sys.argv[1]), int(sys.argv[2]))
    header = json.loads(sys.stdin.buffer.readline())
    blobs = [sys.stdin.buffer.read(g["size"]) for g in header["graphs"]]

    import numpy as np
    import onnxruntime as ort

    ort.set_default_logger_severity(4)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 4
    for i, (graph, blob) in enumerate(zip(header["graphs"], blobs, strict=True)):
        j = None
        try:
            _say(event="open", graph=i)
            session = ort.InferenceSession(blob, options, providers=["CPUExecutionProvider"])
            for j, feed in enumerate(graph["runs"]):
                _say(event="run", graph=i, run=j)
                arrays = {
                    k: (
                        np.zeros(f["shape"], f["dtype"])
                        if f["values"] is None
                        else np.asarray(f["values"], f["dtype"]).reshape(f["shape"])
                    )
                    for k, f in feed.items()
                }
                results = session.run(None, arrays)
                described = [
                    {"name": o.name, **_describe(np, v)}
                    for o, v in zip(session.get_outputs(), results, strict=True)
                ]
                _say(event="outputs", graph=i, run=j, outputs=described)
                del results, arrays
        except Exception as exc:  # onnxruntime's errors are plain Exception subclasses
            _say(event="error", graph=i, run=j, message=f"{type(exc).__name__}: {exc}"[:2000])
            return
    _say(event="done")


if __name__ == "__main__":
    main()
