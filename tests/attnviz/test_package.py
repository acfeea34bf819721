"""The package route (issue #48 item 1): ``python -m build`` makes a wheel; installed into a
fresh venv with no network, its ``attnviz`` command runs from a folder outside the clone:
``--help``, ``convert`` of a nanoGPT checkpoint, ``serve`` answering its health check, and
the notebook API finds the shipped models inside the installed tree.

The fresh venv sees this venv's packages (the dependencies) through one ``.pth`` line, and
the wheel is installed with ``--no-deps --no-index``: nothing is downloaded.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

from deploy.launch import free_port
from tests.helpers import ROOT
from tests.helpers.nanogpt_layout import ARGS, ckpt_bytes, meta_bytes, nanogpt_state

pytestmark = pytest.mark.slow  # a build, a venv, a conversion and a server: ~20 s


def _run(cmd: list, cwd: Path, env: dict, timeout: float = 120) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{cmd}: {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(venv folder, a working folder outside the clone, env): the wheel built from this
    tree (sdist, then the wheel from it) installed into a new venv."""
    tmp = tmp_path_factory.mktemp("pkg")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env |= {"PIP_NO_INDEX": "1", "ATTNVIZ_CACHE_DIR": str(tmp / "cache")}
    _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(tmp / "dist"),
          str(ROOT)], ROOT, env, timeout=300)  # fmt: skip
    wheel = next((tmp / "dist").glob("*.whl"))
    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp, env)
    python = venv / "bin" / "python"
    site = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                tmp, env).stdout.strip()  # fmt: skip
    deps = sysconfig.get_paths()["purelib"]  # this venv's site-packages, from sys.prefix
    Path(site, "_dependencies.pth").write_text(f"{deps}\n")
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
          "--no-index", str(wheel)], tmp, env)  # fmt: skip
    work = tmp / "work"
    work.mkdir()
    return venv, work, env, wheel


def test_the_wheel_holds_the_tree_and_the_models(installed):
    names = set(zipfile.ZipFile(installed[3]).namelist())
    for path in ("app.py", ".streamlit/config.toml", "exported/softmax.inspect.onnx",
                 "exported/model_card.json", "exported/tokenizer.json", "ui/chart.js", "ui/square.js",
                 "ui/assets/eye.svg", "attnviz/cli.py", "bench/results/results.json"):  # fmt: skip
        assert f"attention_visualizer/{path}" in names
    assert "attention_visualizer.pth" in names
    assert not any(n.startswith("attention_visualizer/tests/") for n in names)
    assert "attention_visualizer/setup.py" not in names


def test_help_lists_every_command(installed):
    venv, work, env, _ = installed
    out = _run([str(venv / "bin" / "attnviz"), "--help"], work, env).stdout
    for command in ("serve", "convert", "train", "export", "evaluate", "bench"):
        assert f"\n  {command} " in out
    unknown = subprocess.run([str(venv / "bin" / "attnviz"), "nope"], cwd=work, env=env,
                             capture_output=True, text=True)  # fmt: skip
    assert unknown.returncode != 0 and "no command 'nope'" in unknown.stderr


def test_the_installed_tree_is_imported_not_the_clone(installed):
    venv, work, env, _ = installed
    code = "import ui, attnviz, models.checkpoint as c; print(ui.__file__); print(c.SHIPPED_DIR)"
    out = _run([str(venv / "bin" / "python"), "-c", code], work, env).stdout.splitlines()
    assert all(line.startswith(str(venv)) for line in out), out
    code = "import attnviz; m = attnviz.load('softmax'); print(m.analyse('the cat sat').T)"
    assert _run([str(venv / "bin" / "python"), "-c", code], work, env).stdout.strip() == "3"


def test_convert_a_nanogpt_checkpoint_outside_the_clone(installed):
    venv, work, env, _ = installed
    (work / "ckpt.pt").write_bytes(ckpt_bytes(nanogpt_state(ARGS), ARGS))
    (work / "meta.pkl").write_bytes(meta_bytes())
    cmd = [str(venv / "bin" / "attnviz"), "convert", "ckpt.pt", "--meta", "meta.pkl", "--out", "c"]
    out = _run(cmd, work, env).stdout
    assert (work / "c" / "ckpt.safetensors").stat().st_size > 0
    assert "wrote c/ckpt.safetensors" in out and "7,328 parameters" in out


def test_serve_answers_its_health_check(installed):
    venv, work, env, _ = installed
    port = free_port()
    server = subprocess.Popen([str(venv / "bin" / "attnviz"), "serve", "--port", str(port)],
                              cwd=work, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)  # fmt: skip
    try:
        status, deadline = None, time.monotonic() + 120
        while status != 200 and time.monotonic() < deadline and server.poll() is None:
            try:
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/_stcore/health", timeout=2
                ) as r:
                    status = r.status
            except OSError:
                time.sleep(0.25)
        assert status == 200, f"no health answer; exit {server.poll()}"
    finally:
        server.terminate()
        log = server.communicate(timeout=30)[0]
    assert f"Local URL: http://localhost:{port}" in log
