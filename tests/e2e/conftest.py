"""A real Streamlit server on a free loopback port and Debian's headless Chromium."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import types
import urllib.request
from pathlib import Path

import pytest

from tests.helpers import ROOT
from tests.helpers.browser import CHROMIUM, CHROMIUM_ARGS


def pytest_collection_modifyitems(items) -> None:
    """Browser tests that try to take the shared server down run after all the others.

    Under pytest-xdist (``--dist loadgroup``) every browser test runs on one worker, in
    this order, against one server; the unit tests share out the other worker.
    """
    items.sort(key=lambda item: item.module.__name__.endswith("test_hostile_uploads"))
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(pytest.mark.xdist_group("browser"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def streamlit_server(script_args: list[str] | None = None, env: dict | None = None):
    """``streamlit run app.py [-- script_args]`` on 127.0.0.1:<free port>, stopped on exit.

    Yields a namespace with ``url``, ``pid`` (the server process: ``streamlit`` itself,
    not a shell) and ``log()`` (what the server printed so far).
    """
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    log = tempfile.TemporaryFile()  # a pipe nobody reads could fill up and stall the server
    args = ["--", *script_args] if script_args else []
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            str(ROOT / "app.py"),
            "--server.port",
            str(port),
            "--server.address",
            "127.0.0.1",
            "--server.headless",
            "true",
            "--browser.gatherUsageStats",
            "false",
            *args,
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            time.sleep(0.3)
    else:
        proc.kill()
        log.seek(0)
        raise RuntimeError("streamlit did not start: " + log.read().decode()[-2000:])

    def read_log() -> str:
        log.seek(0)
        return log.read().decode(errors="replace")

    try:
        yield types.SimpleNamespace(url=url, pid=proc.pid, log=read_log)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="session")
def server():
    """The app on the shipped models (see :func:`streamlit_server`)."""
    with streamlit_server() as running:
        yield running


@pytest.fixture(scope="session")
def server_url(server) -> str:
    return server.url


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1500, "height": 1100})
    pg = context.new_page()
    pg.dialogs = []
    pg.on("dialog", lambda d: (pg.dialogs.append(d.message), d.dismiss()))
    yield pg
    context.close()
