"""Each generator in ``hostile_gen`` really does harm: the harmful operation is run in a
subprocess (with a timeout, or a memory limit where the harm is memory) and seen to
crash, hang, panic or run out of memory, next to a control that does not.

These tests pin the test suite's premises; they do not test the app.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import textwrap
from io import BytesIO

import pytest
import torch

from tests.helpers import ROOT
from tests.helpers import hostile_gen as gen

HANG_S = 5  # "runs for minutes": still running after this many seconds
HEADROOM = 2**30  # "needs GBs": fails with this much address space above its start


def run_python(code: str, data: bytes, timeout_s: float = 60, headroom: int | None = None):
    """Run ``code`` in a fresh interpreter with ``data`` on stdin (``DATA`` in the code).

    ``headroom``: RLIMIT_AS = the child's address space when the code starts + this.
    Returns (exit code or None on timeout, stdout, stderr).
    """
    prelude = "import sys\nDATA = sys.stdin.buffer.read()\n"
    if headroom is not None:
        prelude += textwrap.dedent(
            f"""\
            import resource
            def limit_memory():
                with open("/proc/self/status") as f:
                    vm = int(f.read().split("VmSize:")[1].split()[0]) * 1024
                resource.setrlimit(resource.RLIMIT_AS, (vm + {headroom}, vm + {headroom}))
            """
        )
    proc = subprocess.Popen(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "RUST_BACKTRACE": "0", "OMP_NUM_THREADS": "1"},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(data, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return None, out.decode(errors="replace"), err.decode(errors="replace")
    return proc.returncode, out.decode(errors="replace"), err.decode(errors="replace")


# --- a. SIGSEGV ----------------------------------------------------------------------


def test_meta_pkl_nested_tuple_kills_the_unpickler():
    files = gen.meta_pkl_nested_tuple()
    assert 900_000 < len(files["meta.pkl"]) < 1_200_000
    shallow = gen.nested_tuple_key(pickle.dumps({"a": 1, "b": 2}, protocol=2), depth=1000)
    code = "import pickle; pickle.loads(DATA); print('survived')"
    assert run_python(code, shallow)[:2] == (0, "survived\n")  # the control
    assert run_python(code, files["meta.pkl"])[0] == -signal.SIGSEGV
    from upload.formats.nanogpt import convert_nanogpt

    assert convert_nanogpt(files["ckpt.pt"], gen.valid_nanogpt()["meta.pkl"])  # its pair is fine


@pytest.mark.slow
def test_ckpt_pt_nested_tuple_kills_torch_load():
    files = gen.ckpt_pt_nested_tuple()
    code = """\
        import io, torch
        torch.load(io.BytesIO(DATA), weights_only=True, map_location="cpu")
        print("survived")
    """
    assert run_python(code, gen.valid_nanogpt()["ckpt.pt"])[:2] == (0, "survived\n")
    assert run_python(code, files["ckpt.pt"])[0] == -signal.SIGSEGV


# --- b. tokenizers ---------------------------------------------------------------------

LOAD_TOKENIZER = """\
import json
from models.tokenizer import encode, load_tokenizer
n = int.from_bytes(DATA[:8], "little")
tokenizer = load_tokenizer(json.loads(DATA[8 : 8 + n])["__metadata__"]["tokenizer"])
"""
ENCODE = (
    LOAD_TOKENIZER
    + """\
{before}
try:
    print(len(encode(tokenizer, "When Mary and John went to the store , John gave a drink .").ids))
except BaseException as exc:
    print(type(exc).__name__, isinstance(exc, Exception))
"""
)
# encode() in a thread while the main thread sleeps 0.2 s: "woke" unless the GIL is held.
ENCODE_IN_THREAD = (
    LOAD_TOKENIZER
    + """\
import os, threading, time
threading.Thread(target=lambda: encode(tokenizer, "the cat sat"), daemon=True).start()
time.sleep(0.2)
print("woke", flush=True)
os._exit(0)
"""
)


def _load(data: bytes, tmp_path, name: str):
    from models.checkpoint import load_checkpoint

    path = tmp_path / name
    path.write_bytes(data)
    return load_checkpoint(path)  # today's checks accept it: the harm reaches the app


@pytest.mark.slow
def test_tokenizer_redos_holds_the_gil_for_minutes(tmp_path):
    """encode() in a thread; the main thread, asleep for 0.2 s, never wakes up again
    within HANG_S: the encoding holds the GIL (a whole server would freeze)."""
    (data,) = gen.tokenizer_redos().values()
    _load(data, tmp_path, "redos.safetensors")
    code = ENCODE_IN_THREAD
    assert run_python(code, data, timeout_s=HANG_S)[0] is None  # never woke up
    control = gen.with_tokenizer(data, lambda t: setattr(t, "normalizer", None))
    assert run_python(code, control, timeout_s=HANG_S)[:2] == (0, "woke\n")


def test_tokenizer_panic_raises_panic_exception(tmp_path):
    (data,) = gen.tokenizer_panic().values()
    _load(data, tmp_path, "panic.safetensors")
    code, out, err = run_python(ENCODE.format(before=""), data, timeout_s=60)
    assert (code, out) == (0, "PanicException False\n"), err[-500:]  # not an Exception
    assert "retry-limit-in-match" in err


@pytest.mark.slow
def test_tokenizer_huge_padding_needs_gigabytes(tmp_path):
    (data,) = gen.tokenizer_huge_padding().values()
    _, tokenizer, _ = _load(data, tmp_path, "padding.safetensors")
    assert tokenizer.padding["length"] == gen.PAD_TOKENS
    limited = ENCODE.format(before="limit_memory()")
    code, out, err = run_python(limited, data, headroom=HEADROOM)
    assert code != 0 or not out.strip().isdigit(), f"encoded within 1 GiB: {out}"
    control = gen.with_tokenizer(data, lambda t: t.no_padding())
    code, out, _ = run_python(limited, control, headroom=HEADROOM)
    assert code == 0 and 0 < int(out) < 100


# --- c. ONNX --------------------------------------------------------------------------

RUN_AT = """\
    import numpy as np, onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.enable_cpu_mem_arena = False
    session = ort.InferenceSession(DATA, options, providers=["CPUExecutionProvider"])
    def run(T):
        try:
            out = session.run(["logits"], {"input_ids": np.ones((1, T), np.int64)})[0]
            return f"ok {out.shape}"
        except Exception as exc:
            return type(exc).__name__
    print(run(3), "|", run(8))
    limit_memory()
    print(run(3), "|", run(8), "|", run(TRIGGER))
"""


def test_onnx_alloc_at_length_passes_the_trial_and_allocates_gigabytes(digits_export):
    import onnxruntime as ort

    from upload.onnx_checks import graph_config, validate_onnx
    from upload.onnx_contract import run_trial

    _, folder = digits_export
    ((name, data),) = gen.onnx_alloc_at_length(
        (folder / "digits.inspect.onnx").read_bytes()
    ).items()
    model, _ = validate_onnx(data, name)  # the static checks and the trial run accept it
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    run_trial({"inspect": (name, session)}, graph_config(model))
    code = RUN_AT.replace("TRIGGER", str(gen.TRIGGER_TOKENS))
    rc, out, err = run_python(code, data, headroom=HEADROOM)
    assert rc == 0, err[-1000:]
    first, second = out.splitlines()
    assert first == second.rsplit(" | ", 1)[0] == "ok (1, 3, 22) | ok (1, 8, 22)"
    assert "ok" not in second.rsplit(" | ", 1)[1], out  # over 1 GiB at TRIGGER_TOKENS tokens


def test_onnx_many_empty_nodes_needs_gigabytes_to_parse(digits_export):
    ((_, data),) = gen.onnx_many_empty_nodes().items()
    assert gen.UPLOAD_CAP - 8192 < len(data) <= gen.UPLOAD_CAP
    code = """\
        import onnx
        limit_memory()
        m = onnx.ModelProto()
        try:
            m.ParseFromString(DATA)
            print("parsed", len(m.graph.node))
        except Exception as exc:
            print(type(exc).__name__, exc)
    """
    _, folder = digits_export
    control = (folder / "digits.inspect.onnx").read_bytes()
    assert run_python(code, control, headroom=HEADROOM)[1].startswith("parsed")
    rc, out, err = run_python(code, data, headroom=HEADROOM)
    assert "parsed" not in out and (rc != 0 or "alloc" in out.lower()), out + err[-500:]


# --- d. zero strides -------------------------------------------------------------------


@pytest.mark.slow
def test_pt_zero_stride_comparison_runs_for_minutes():
    files = gen.pt_zero_stride()
    assert len(files["ckpt.pt"]) < 100_000
    state = torch.load(BytesIO(files["ckpt.pt"]), weights_only=True)["model"]
    wte, head = state["transformer.wte.weight"], state["lm_head.weight"]
    assert wte.stride() == (0, 0) and wte.numel() == gen.ZERO_STRIDE_SIDE**2
    assert wte.untyped_storage().data_ptr() != head.untyped_storage().data_ptr()
    code = """\
        import io, torch
        torch.set_num_threads(1)
        s = torch.load(io.BytesIO(DATA), weights_only=True)["model"]
        print(torch.equal(s["lm_head.weight"], s["transformer.wte.weight"]))
    """
    assert run_python(code, files["ckpt.pt"], timeout_s=HANG_S)[0] is None
    assert run_python(code, gen.valid_nanogpt()["ckpt.pt"])[:2] == (0, "True\n")


# --- e. malformed files ------------------------------------------------------------------


def test_safetensors_nested_header_raises_recursion_error():
    (data,) = gen.safetensors_nested_header().values()
    n = int.from_bytes(data[:8], "little")
    assert data[8:9] == b"{" and data[8 : 8 + n].count(b"[") >= gen.HEADER_NESTING
    with pytest.raises(RecursionError):  # not a ValueError
        json.loads(data[8 : 8 + n])


def test_safetensors_config_is_not_an_object():
    (data,) = gen.safetensors_config_not_object().values()
    config = json.loads(gen.safetensors_header(data)["__metadata__"]["config"])
    assert isinstance(config, list) and isinstance(config[0], dict)


def test_pt_non_string_keys_and_sparse_tensors_load():
    state = torch.load(BytesIO(gen.pt_non_string_keys()["ckpt.pt"]), weights_only=True)["model"]
    assert {0, None, ("transformer", "wte")} <= set(state)
    state = torch.load(BytesIO(gen.pt_sparse_tensors()["ckpt.pt"]), weights_only=True)["model"]
    assert state["transformer.h.0.mlp.c_fc.weight"].layout == torch.sparse_coo


def test_all_cases_have_distinct_names_and_files(digits_export):
    _, folder = digits_export
    cases = gen.all_cases((folder / "digits.inspect.onnx").read_bytes())
    assert [c.name for c in cases] == list(gen.CASE_NAMES)
    for case in cases:
        assert case.files and all(len(d) <= gen.UPLOAD_CAP for d in case.files.values())
        assert {n.rsplit(".", 1)[1] for n in case.files} <= {"safetensors", "pt", "pkl", "onnx"}
