"""The server operator's models (``--model DIR`` after ``--``): keys, the on-disk cache,
conversion in the background, and the app showing one in every view (AppTest)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

from tests.helpers import ROOT
from tests.helpers.charts import plotly_charts
from tests.helpers.gpt2_folder import gpt2_model, save_folder
from tests.helpers.pages import open_page, short_patching_pair
from ui import served, served_cache
from ui.shared import SharedCache
from ui.text import plain
from ui.visualizer import VIEWS
from upload.errors import UploadError

APP = str(ROOT / "app.py")


def test_folders_come_from_the_apps_own_arguments(tmp_path):
    argv = ["app.py", "--model", "a/gpt2", "--theme", "x", "--model", "b c"]
    assert [str(p) for p in served.served_folders(argv)] == ["a/gpt2", "b c"]
    assert served.served_folders(["/usr/bin/pytest", "--model", "x"]) == []  # not the app's
    assert served.served_folders(["app.py"]) == []
    assert served.served_context(argv) is None
    assert served.served_context(["app.py", "--model", "a", "--context", "256"]) == 256
    assert served.served_context(["app.py", "--context", "²"]) is None  # not a number


def test_keys_never_clash(tmp_path):
    taken: set[str] = set()
    keys = []
    for name in ["GPT-2 Small", "softmax", "upload", "gpt-2-small", "../"]:
        keys.append(served.model_key(tmp_path / name, taken))
        taken.add(keys[-1])
    assert keys[:4] == ["gpt-2-small", "softmax-2", "upload-2", "gpt-2-small-2"]
    assert keys[4] not in ("", "softmax", "linear", "upload")


def test_the_cache_key_follows_the_folders_files(tmp_path):
    folder = save_folder(gpt2_model(), tmp_path / "gpt2")
    first = served.folder_digest(folder)
    (folder / "generation_config.json").write_text("{}")  # not read by the conversion
    assert served.folder_digest(folder) == first
    assert served.folder_digest(folder, 16) != first  # converted with --context 16
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "layer_norm_epsilon": 1e-6}))
    assert served.folder_digest(folder) != first
    (folder / "tokenizer.json").unlink()
    with pytest.raises(UploadError, match="missing tokenizer.json"):
        served.folder_digest(folder)


def test_shared_cache_bounded_by_bytes_keeps_the_newest():
    cache = SharedCache(100, max_bytes=10, size=len)
    for key, value in [("a", "xxxx"), ("b", "yyyy"), ("c", "zzzz")]:
        assert cache.get(key, lambda v=value: v) == value
    assert cache.keys() == ["b", "c"] and cache.nbytes == 8
    assert cache.get("big", lambda: "w" * 50) == "w" * 50  # larger than the budget: kept alone
    assert cache.keys() == ["big"]


@pytest.mark.parametrize("priority", [None, "normal"])
def test_the_converter_yields_to_the_class_unless_priority_is_normal(monkeypatch, priority):
    """A served folder's converter runs at nice 10 below the server; on a shared test host
    (``ATTNVIZ_WORKER_PRIORITY=normal``, tests/conftest.py) at the server's own priority."""
    if priority is None:
        monkeypatch.delenv("ATTNVIZ_WORKER_PRIORITY", raising=False)
    else:
        monkeypatch.setenv("ATTNVIZ_WORKER_PRIORITY", priority)
    own = os.getpriority(os.PRIO_PROCESS, 0)
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        served_cache.lower_priority(proc.pid)
        got = os.getpriority(os.PRIO_PROCESS, proc.pid)
        assert got == (served_cache.CONVERT_NICE if priority is None else own)
    finally:
        proc.kill()
        proc.wait()
    served_cache.lower_priority(proc.pid)  # gone: nothing raised


@pytest.fixture(scope="module")
def served_models(tmp_path_factory):
    """A tiny GPT-2 folder and a broken one, prepared by ``ServedModels`` into a fresh
    cache (the converter runs in a child process); (transformers model, folder, models)."""
    base = tmp_path_factory.mktemp("served")
    model = gpt2_model(seed=4)
    folder = save_folder(model, base / "tiny-gpt2")
    broken = save_folder(gpt2_model(), base / "broken")
    (broken / "tokenizer.json").unlink()
    models = served.ServedModels([folder, broken], root=base / "cache")
    models.thread.join(timeout=600)
    return model, folder, models


@pytest.mark.slow
def test_a_folder_is_converted_once_and_served(served_models):
    model, folder, models = served_models
    assert models.ready() == ["tiny-gpt2"]
    ours = models.get("tiny-gpt2")
    assert ours.card.source == "Hugging Face folder" and ours.card.checkpoint == "tiny-gpt2/"
    assert ours.fast_session is None  # one onnxruntime session: the inspect graph
    assert ours.has_lab and not ours.lab_graph.opened  # the lab's: on first use only
    onnx_files = sorted(p.name for p in models.root.glob("*/*.onnx"))
    assert onnx_files == ["tiny-gpt2.inspect.onnx", "tiny-gpt2.lab.onnx"]
    ids = list(range(0, 300, 10))  # (30,)
    with torch.no_grad():
        want = model(torch.tensor([ids])).logits[0].numpy()
    assert np.abs(ours.logits(ids) - want).max() <= 1e-4 * np.abs(want).max()
    assert ours.weights["blocks.0.attn.q_proj.weight"].shape == (16, 16)  # mapped, not read
    again = served.ServedModels([folder], root=models.root)  # a restarted server
    again.thread.join(timeout=120)
    assert again.ready() == ["tiny-gpt2"]
    assert len([p for p in models.root.iterdir()]) == 1  # the cache, not a new conversion


def test_a_folder_that_cannot_be_converted_is_one_line(served_models):
    entry = served_models[2].entries["broken"]
    assert entry.state == "failed" and entry.model is None
    assert entry.error.startswith("broken/: missing tokenizer.json; a Hugging Face folder needs")
    assert "\n" not in entry.error


@pytest.fixture
def app_with_served(served_models, monkeypatch):
    """app.py as ``streamlit run app.py -- --model <tiny> --model <broken>`` would run it,
    the folders already in the cache."""
    from ui import loaders

    _, folder, models = served_models
    monkeypatch.setattr(sys, "argv", ["app.py", "--model", str(folder), "--model", "x/broken"])
    monkeypatch.setenv(served_cache.CACHE_VARIABLE, str(models.root))
    loaders.served_models.clear()
    yield
    loaders.served_models.clear()


def run_until_served(at: AppTest, key: str) -> AppTest:
    """Rerun until the Model radio offers ``key`` (the cache is opened in the background)."""
    deadline = time.monotonic() + 120
    while key not in at.radio(key="model").options and time.monotonic() < deadline:
        time.sleep(0.5)
        at.run()
    return at


@pytest.mark.slow
def test_the_app_serves_the_folder_in_every_view(app_with_served):
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["model"] = "tiny-gpt2"  # not ready on the first run: said so
    at.run()
    notices = " ".join(w.value for w in at.warning)
    assert "not ready on this server yet" in notices
    run_until_served(at, "tiny-gpt2")
    at.run()  # the broken folder comes after the good one
    notices = " ".join(w.value for w in at.warning)
    assert "broken/ is not served: " + plain("broken: not a folder") in notices, notices
    at.radio(key="model").set_value("tiny-gpt2").run()
    at.text_area(key="text").set_value("the cat sat on the mat.").run()
    for view in VIEWS:
        at.segmented_control(key="view").set_value(view).run()
        if view == "patch":
            short_patching_pair(at)
        assert not at.exception, [e.value for e in at.exception]
        assert not at.error, (view, [e.value for e in at.error])
        assert plotly_charts(at) or at.get("vega_lite_chart") or at.dataframe, view
    assert any(plain("tiny-gpt2 (served)") in m.value for m in at.markdown)  # beside linear
    open_page("merged", at)  # the lesson reads the memory-mapped weights
    assert not at.exception, [e.value for e in at.exception]
    # #44 item 22: a link naming the folder the server refused says why, not "not ready"
    refused = AppTest.from_file(APP, default_timeout=120)
    refused.query_params["model"] = "broken"
    refused.run()
    notices = " ".join(w.value for w in refused.warning)
    assert plain("model=broken") in notices and "not ready" not in notices, notices
    assert notices.count("broken/ is not served: " + plain("broken: not a folder")) == 2


def test_an_evicted_value_is_let_go_and_its_memory_returned():
    released = []
    cache = SharedCache(100, max_bytes=10, size=len, on_evict=lambda: released.append(1))
    cache.get("a", lambda: "xxxxxx")
    assert released == []
    cache.get("b", lambda: "yyyyyy")  # over the budget: "a" goes
    assert cache.keys() == ["b"] and released == [1]


def test_a_served_sentence_s_analysis_is_not_kept_by_later_runs(app_with_served, monkeypatch):
    """Each run's selection (and its analysis) must not outlive the run: a script run's
    globals sit in a reference cycle (its page functions) that Python frees only at a
    full collection, which once kept a gigabyte per sentence of a served GPT-2 alive.
    With the cyclic collector off (as Streamlit's ``postScriptGC = false`` leaves it
    between runs), five sentences leave at most the cached analysis and the last run's."""
    import gc

    from inference.analysis import Analysis
    from ui import loaders

    monkeypatch.setattr(served, "ANALYSIS_CACHE_BYTES", 1)  # keeps only the newest
    loaders._served_analyses.clear()
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    run_until_served(at, "tiny-gpt2")
    at.radio(key="model").set_value("tiny-gpt2").run()
    gc.collect()
    gc.disable()
    try:
        for i in range(5):
            at.text_area(key="text").set_value(f"the cat sat on mat number {i}.").run()
            assert not at.exception, [e.value for e in at.exception]
        live = [
            o for o in gc.get_objects()
            if isinstance(o, Analysis) and o.text.startswith("the cat sat on mat number")
        ]  # fmt: skip
    finally:
        gc.enable()
        loaders._served_analyses.clear()
    assert len(live) <= 2, [a.text for a in live]


def test_half_written_conversions_of_a_stopped_server_are_removed(tmp_path):
    import os

    gone = tmp_path / ".gpt2-0123.999999999.tmp"  # no such process
    mine = tmp_path / f".gpt2-0123.{os.getpid()}.tmp"  # still converting
    for folder in (gone, mine, tmp_path / "gpt2-0123"):
        folder.mkdir()
    served_cache.remove_stale(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [mine.name, "gpt2-0123"]


def test_a_served_model_is_ready_without_any_visitor(served_models):
    """``make run``'s entry (``python -m ui.launch``) starts preparing the served models
    before the server answers anyone: with no session ever opened, the server's log says
    the model is served."""
    from deploy.launch import free_port

    _, folder, models = served_models
    env = {**os.environ, served_cache.CACHE_VARIABLE: str(models.root), "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "ui.launch", "--server.port", str(free_port())]
    cmd += ["--server.headless", "true", "--", "--model", str(folder)]
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline, text = time.monotonic() + 120, ""
            while "tiny-gpt2: serving" not in text and time.monotonic() < deadline:
                assert proc.poll() is None, text
                time.sleep(0.5)
                log.seek(0)
                text = log.read().decode(errors="replace")
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    assert "[served models] tiny-gpt2: serving" in text, text


def test_every_session_is_told_what_a_served_model_is_doing(tmp_path):
    entry = served.Entry("gpt2", tmp_path / "gpt2")
    entry._stage("converting")
    assert entry.progress() == (
        "gpt2/: converting it for this server (first start only: GPT-2 small takes a few "
        "minutes): 0 s so far"
    )
    entry._stage("opening")  # found in the cache: not "first start only"
    assert entry.progress() == "gpt2/: opening its converted graphs (converted before): 0 s so far"
    entry.state = "ready"
    assert entry.progress() == ""
