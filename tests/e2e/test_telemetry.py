"""Issue #50: a served run leaves no onnxruntime telemetry queue behind.

onnxruntime's telemetry client writes ``~/.cache/Microsoft/DeveloperTools/.onnxruntime/
onnxruntime.db`` (uploaded file names, graph names, error messages) in every process that
opens a session unless ``ORT_DISABLE_TELEMETRY`` is set when onnxruntime is imported
(``inference/__init__.py`` sets it; docs/security.md). The server runs with HOME in a
temporary folder and that variable emptied (so nothing is inherited from this test's
process), and ``CI`` emptied too: onnxruntime writes no queue where ``CI`` is set (as in
``.ci/run``), which would let both tests pass or fail for the wrong reason; a browser opens the app (the server's own sessions) and uploads a graph that a
worker opens and runs.
"""

from __future__ import annotations

import os
import subprocess
import sys

from tests.e2e.conftest import streamlit_server
from tests.e2e.test_browser import type_sentence, upload_files
from tests.helpers import ROOT

QUEUE = ".cache/Microsoft/DeveloperTools/.onnxruntime"
OPEN_A_SESSION = (
    "import onnxruntime as ort; "
    f"ort.InferenceSession({str(ROOT / 'exported' / 'softmax.fast.onnx')!r}, "
    "providers=['CPUExecutionProvider'])"
)


def test_onnxruntime_writes_its_queue_where_this_test_looks(tmp_path):
    """The control: onnxruntime alone, telemetry not turned off, writes the queue there."""
    env = os.environ | {"HOME": str(tmp_path), "ORT_DISABLE_TELEMETRY": "", "CI": ""}
    subprocess.run([sys.executable, "-c", OPEN_A_SESSION], env=env, check=True, timeout=120)
    assert (tmp_path / QUEUE / "onnxruntime.db").exists()


def test_a_served_run_leaves_no_telemetry_queue(page, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "ORT_DISABLE_TELEMETRY": "", "CI": ""}
    with streamlit_server(env=env) as server:
        upload_files(page, server.url, [ROOT / "exported" / "softmax.inspect.onnx"])
        type_sentence(page, "the cat sat on the mat")  # the worker's session runs it
        page.wait_for_selector(".js-plotly-plot")
        assert "Traceback" not in server.log()
    left = sorted(str(p.relative_to(home)) for p in home.rglob("*"))
    assert not (home / ".cache" / "Microsoft").exists(), left
