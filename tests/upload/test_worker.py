"""The isolation itself: what a hostile file does to the worker never reaches the server.

Real processes throughout: workers are started, crash, run out of memory and are
killed for real; the protocol is read from real pipes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import onnx
import pytest
import torch

from export.graphs import export_model
from inference.sessions import ModelRunError
from models.config import ModelConfig
from models.tokenizer import build_tokenizer
from models.transformer import Transformer
from tests.helpers import ROOT, hostile_onnx
from tests.helpers.checkpoints import tiny_checkpoint
from tests.helpers.nanogpt_layout import ARGS, ckpt_bytes, nanogpt_state
from tests.helpers.shared import built_once
from upload import protocol
from upload.errors import UploadError, WorkerError
from upload.limits import MAX_UPLOAD_BYTES, UPLOAD_MEGABYTES
from upload.load import load_upload
from upload.tempdirs import EXPORTS_PREFIX, TEMP_PREFIX, remove_stale_workdirs
from upload.tokenizer_spec import spec_from_json

CONTEXT = 16


@pytest.fixture(scope="module")
def graphs(tmp_path_factory) -> dict[str, onnx.ModelProto]:
    """A tiny softmax model's contract graphs (context 16)."""
    tokenizer = build_tokenizer(["the cat sat on the mat .", "the dogs are in the park ."])
    torch.manual_seed(0)
    cfg = ModelConfig(
        vocab_size=tokenizer.get_vocab_size(), n_layer=1, n_head=2, d_model=16, d_mlp=32,
        context_length=CONTEXT,
    )  # fmt: skip

    def build(folder):
        export_model(Transformer(cfg).eval(), folder, tokenizer, prefix="w")

    folder = built_once(tmp_path_factory, "worker_graphs", build)  # xdist workers share it
    return {role: onnx.load(str(folder / f"w.{role}.onnx")) for role in ("inspect", "fast")}


def nested_key_pickle(depth: int = 1_000_000) -> bytes:
    """A pickled dict whose key is a tuple nested ``depth`` deep (built with opcodes, so
    making the file recurses nowhere): hashing the key recurses in C until CPython
    crashes with SIGSEGV."""
    return b"\x80\x02}" + b")" + b"\x85" * depth + b"K\x01s."


@pytest.mark.slow
def test_a_pickle_that_crashes_the_reader_stops_only_its_worker(tmp_path):
    meta = nested_key_pickle()
    crash = subprocess.run(  # the same bytes do crash a plain Python process
        [sys.executable, "-c", "import pickle, sys; pickle.loads(sys.stdin.buffer.read())"],
        input=meta, capture_output=True, timeout=60,
    )  # fmt: skip
    assert crash.returncode == -signal.SIGSEGV
    ckpt = ckpt_bytes(nanogpt_state(ARGS), ARGS, optimizer=False)
    with pytest.raises(WorkerError, match=r"^ckpt.pt \+ meta.pkl: stopped: the reader crashed"):
        load_upload({"ckpt.pt": ckpt, "meta.pkl": meta})
    good = tiny_checkpoint(tmp_path / "good.safetensors")
    assert load_upload({"good.safetensors": good.read_bytes()}).card.config["n_layer"] >= 1


def test_a_graph_that_explodes_at_another_length_fails_that_sentence_only(graphs):
    bad = hostile_onnx.rewire_output(
        graphs["inspect"], "logits", hostile_onnx.allocate_at_length(5)
    )
    model = load_upload({"w.inspect.onnx": bad.SerializeToString()})  # trial lengths: fine
    try:
        assert model.inspect([1, 2, 3, 4])["attn"].shape == (1, 2, 4, 4)
        with pytest.raises(ModelRunError) as info:
            model.inspect([1, 2, 3, 4, 5])  # 4 GiB asked for, in the worker
        assert "\n" not in str(info.value) and len(str(info.value)) < 700
        assert model.inspect([1, 2, 3, 4])["logits"].shape[1] == 4  # the same or a fresh worker
    finally:
        model.close()


@pytest.mark.slow
def test_a_killed_worker_is_replaced_on_the_next_analysis(graphs):
    model = load_upload({"w.inspect.onnx": graphs["inspect"].SerializeToString()})
    try:
        first = model.inspect([1, 2, 3])["attn"]
        pid = model._worker.proc.pid
        os.kill(pid, signal.SIGKILL)
        model._worker.proc.wait()
        again = model.inspect([1, 2, 3])["attn"]
        assert model._worker.proc.pid != pid
        np.testing.assert_array_equal(first, again)
        rows = again.sum(axis=-1)  # (L, H, T): a softmax over keys
        np.testing.assert_allclose(rows, 1.0, atol=1e-5)
    finally:
        model.close()
    assert model._worker.proc is None


def test_replies_are_checked_before_anything_is_allocated():
    read, write = os.pipe()
    try:
        header = {
            "ok": True,
            "arrays": [{"name": "attn", "dtype": "float32", "shape": [2**20] * 3}],
        }
        text = json.dumps(header).encode()
        os.write(write, len(text).to_bytes(8, "little") + text)
        got = protocol.read_header(read, time.monotonic() + 5, 2**20)
        expect = lambda name, shape: shape == (1, 2, 3)  # noqa: E731
        with pytest.raises(WorkerError, match=r"protocol: an unexpected array 'attn' of shape"):
            protocol.read_payload(read, got, time.monotonic() + 5, 2**70, expect)
        with pytest.raises(WorkerError, match=r"protocol: a payload of"):  # bounded in all too
            protocol.read_payload(read, got, time.monotonic() + 5, 2**30)
        os.write(write, (2**40).to_bytes(8, "little"))
        with pytest.raises(WorkerError, match="protocol: a header of"):
            protocol.read_header(read, time.monotonic() + 5, 2**20)
        with pytest.raises(WorkerError, match="timeout"):  # nothing more was written
            protocol.read_header(read, time.monotonic() + 0.2, 2**20)
    finally:
        os.close(read)
        os.close(write)


def test_a_tokenizer_with_its_own_regex_never_leaves_the_worker(tmp_path):
    path = tiny_checkpoint(tmp_path / "regex.safetensors")
    from safetensors import safe_open

    with safe_open(str(path), "np") as f:
        meta = f.metadata()
    tok = json.loads(meta["tokenizer"])
    tok["pre_tokenizer"] = {"type": "Split", "pattern": {"Regex": "(a+)+$"},
                            "behavior": "Isolated", "invert": False}  # fmt: skip
    with pytest.raises(UploadError, match="refused: its tokenizer is not one this app builds"):
        spec_from_json(json.dumps(tok), "regex.safetensors")
    tok["padding"] = {"strategy": {"Fixed": 10**9}}
    with pytest.raises(UploadError, match="not one this app builds"):
        spec_from_json(json.dumps(tok), "regex.safetensors")


@pytest.mark.slow
def test_the_server_side_imports_no_reader_of_user_bytes(tmp_path, graphs):
    """Loading every kind of upload (a checkpoint, a contract graph, a foreign graph with
    its tokenizer.json) in a fresh process never imports the worker's readers, nor torch
    (the exporter runs in a worker too)."""
    from tests.helpers.foreign_lm import char_tokenizer_json, export, tiny_lm
    from tests.helpers.nanogpt_layout import V

    good = tiny_checkpoint(tmp_path / "good.safetensors")
    onnx_path = tmp_path / "w.inspect.onnx"
    onnx.save(graphs["inspect"], str(onnx_path))
    foreign, tok = tmp_path / "lm.onnx", tmp_path / "tokenizer.json"
    foreign.write_bytes(export(tiny_lm(V)))
    tok.write_bytes(char_tokenizer_json())
    code = f"""
import sys
from upload.load import load_upload
m = load_upload({{"good.safetensors": open({str(good)!r}, "rb").read()}})
i = load_upload({{"w.inspect.onnx": open({str(onnx_path)!r}, "rb").read()}})
i.inspect([1, 2]); i.close()
f = load_upload({{"lm.onnx": open({str(foreign)!r}, "rb").read(),
                 "tokenizer.json": open({str(tok)!r}, "rb").read()}})
f.inspect([1, 2]); f.close()
readers = ["upload.intake", "upload.pickles", "upload.handlers", "upload.onnx_checks", "upload.formats.nanogpt",
           "upload.formats.ours", "upload.onnx_wire", "upload.onnx_attention",
           "upload.onnx_foreign", "onnx", "torch"]
print([name for name in readers if name in sys.modules])
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_stale_upload_folders_are_removed_and_fresh_ones_kept(tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    stale, fresh = tmp_path / f"{TEMP_PREFIX}old", tmp_path / f"{TEMP_PREFIX}new"
    for folder in (stale, fresh):
        (folder / "onnx").mkdir(parents=True)
    old = time.time() - 3600
    os.utime(stale, (old, old))
    assert remove_stale_workdirs(600) == 1
    assert not stale.exists() and fresh.exists()


def test_an_export_cache_folder_is_removed_once_its_server_is_gone(tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    gone = tmp_path / f"{EXPORTS_PREFIX}{ended.pid}-abc"
    alive = tmp_path / f"{EXPORTS_PREFIX}{os.getpid()}-def"
    odd = tmp_path / f"{EXPORTS_PREFIX}²-ghi"  # not a process id: removed, never int()'d
    for folder in (gone, alive, odd):
        (folder / "k").mkdir(parents=True)
    assert remove_stale_workdirs(600) == 2
    assert alive.exists() and not gone.exists() and not odd.exists()


def test_one_upload_limit_for_the_browser_and_the_code():
    text = (ROOT / ".streamlit" / "config.toml").read_text()
    assert f"maxUploadSize = {UPLOAD_MEGABYTES}" in text
    assert MAX_UPLOAD_BYTES == UPLOAD_MEGABYTES * 1_000_000  # the browser's megabyte


@pytest.mark.slow
def test_one_worker_serves_many_cpu_seconds_of_requests(exported_dir):
    """Each request moves the worker's soft CPU limit; its hard limit never has to rise
    (an unprivileged process cannot raise it), so a long session keeps its worker."""
    import psutil

    files = {n: (exported_dir / n).read_bytes() for n in ("linear.inspect.onnx",)}
    model = load_upload(files)
    try:
        worker = psutil.Process(model._worker.proc.pid)
        start = sum(worker.cpu_times()[:2])
        ids = list(range(1, 65))  # T = 64
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            model.inspect(ids)
            if sum(worker.cpu_times()[:2]) - start > 2.5:
                break
        assert sum(worker.cpu_times()[:2]) - start > 2.5
        assert worker.pid == model._worker.proc.pid  # the same worker all along
    finally:
        model.close()


def test_a_refusal_is_the_worker_s_own_line_and_the_next_upload_gets_a_fresh_worker():
    with pytest.raises(UploadError) as info:
        load_upload({"ckpt.pt": b"PK\x03\x04 not a zip"})
    assert str(info.value).startswith("ckpt.pt: ")
    assert "could not be read (UploadError" not in str(info.value)
    assert not isinstance(info.value, WorkerError)
    with pytest.raises(UploadError, match=r"^m.onnx: truncated or corrupt"):
        load_upload({"m.onnx": b"\x08\x07"})
