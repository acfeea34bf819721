"""Shared fixtures: small random models and the shipped exported/ folder."""

from __future__ import annotations

import os

# One OpenMP thread per test process, set before anything imports torch. `make test` runs two
# xdist workers on two cores; torch's default (a thread per core each) made them spin against
# each other: a tiny model's train/export/evaluate test took 255 s instead of 53 s.
os.environ.setdefault("OMP_NUM_THREADS", "1")
# Upload workers (and those of the servers the tests start) at normal priority: at
# SCHED_IDLE they run only on CPU nobody else wants, so any other job on the machine (a
# neighbour on a CI host, a developer's build) would stall every upload test. The same
# for a served folder's converter (nice 10 otherwise: ui/served_cache.py): beside two busy
# loops the four families' conversions took 533 s instead of 42 s. The tests of
# the scheduling itself (tests/upload/test_client.py) and the hostile-upload suite, which
# times another session beside the uploads, run them at SCHED_IDLE as a server does.
os.environ.setdefault("ATTNVIZ_WORKER_PRIORITY", "normal")

import asyncio
from pathlib import Path

import pytest

from bench.apptest import scan_components_once
from tests.helpers import EXPORTED
from tests.helpers.checkpoints import digits_model
from tests.helpers.skips import pytest_addoption, pytest_runtest_makereport  # noqa: F401 (hooks)

scan_components_once()  # every AppTest of the run shares one scan (0.34 s each otherwise)

# xdist_group marks that reach xdist's scheduler on pytest 9.2 (pytest-xdist#1386)
pytest_plugins = ("tests.helpers.xdist_groups",)

# Fixtures that export, convert or trace a model on the spot (5 s to a minute each on the
# 2-core machine, even when shared by xdist's workers): a test that needs one, directly or
# through another fixture, is in the slow tier (README "Testing"), as is a test of the tiny
# DeltaNet export (about a minute a graph: ``tests/helpers/export_cache.py``).
SLOW_FIXTURES = {
    "tests.bench.conftest:tiny_folder",
    "tests.conftest:digits_export",
    "tests.conftest:hf_exports",
    "tests.conftest:tiny_seq2seq",
    "tests.ui.test_served:served_models",
    "tests.upload.test_convert:cli_out",
    "tests.upload.test_local:large",
    "tests.upload.test_onnx_foreign:exports",
    "tests.upload.test_onnx_upload:linear",
    "tests.upload.test_worker:graphs",
}


def _needs_a_slow_fixture(item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    for name in item.fixturenames:
        for fixture in info.name2fixturedefs.get(name, ()):
            func = fixture.func
            if f"{func.__module__}:{func.__name__}" in SLOW_FIXTURES:
                return True
    if "tiny_exports" in item.fixturenames:  # the DeltaNet export, by name or parameter
        params = getattr(getattr(item, "callspec", None), "params", {})
        return "delta" in item.originalname or "delta" in params.values()
    return False


def pytest_collection_modifyitems(items) -> None:
    """Mark ``slow`` every test that needs one of :data:`SLOW_FIXTURES`, and give each
    test its tier as a JUnit property (``drift``, ``slow`` or ``fast``: what
    ``tests/helpers/counts.py`` counts per tier)."""
    for item in items:
        if _needs_a_slow_fixture(item):
            item.add_marker(pytest.mark.slow)
        marks = {m.name for m in item.iter_markers()}
        tier = "drift" if "drift" in marks else "slow" if "slow" in marks else "fast"
        item.user_properties.append(("tier", tier))


@pytest.fixture(autouse=True)
def _no_playwright_loop(request):
    """A test that uses no browser runs with no event loop marked running in its thread.

    Playwright's sync API marks its own loop as running in the main thread between its
    calls, for as long as the session's ``browser`` fixture lives. ``make test`` runs the
    fast and slow tiers in one pytest run, so a test after any browser test on the same
    xdist worker found that loop and ``asyncio.run`` refused to start ("cannot be called
    from a running event loop"). The mark is lifted for the test and put back after it.
    """
    if "browser" in request.fixturenames:
        yield
        return
    loop = asyncio.events._get_running_loop()
    if loop is not None:
        asyncio.events._set_running_loop(None)
    try:
        yield
    finally:
        if loop is not None:
            asyncio.events._set_running_loop(loop)


@pytest.fixture(scope="session")
def exported_dir() -> Path:
    return EXPORTED


@pytest.fixture(scope="session")
def tiny_tokenizer():
    from tests.helpers.export_cache import tiny_tokenizer

    return tiny_tokenizer()


@pytest.fixture(scope="session")
def tiny_exports(tmp_path_factory, tiny_tokenizer):
    """Random tiny models of every attention kind exported to ONNX: kind -> (model,
    folder), each exported on first access, once per run (``built_once``: the xdist
    workers share the folder; every worker builds the same model from seed 0), and kept
    on disk between sessions (``tests/helpers/export_cache.py``). The folders are
    read-only to tests."""
    from models.config import ATTENTION_KINDS
    from tests.helpers.export_cache import LazyExports, cached_export, tiny_model
    from tests.helpers.shared import built_once

    def build(kind: str) -> tuple:
        model = tiny_model(kind, tiny_tokenizer)

        def write(folder):
            cached_export(model, tiny_tokenizer, folder)

        return model, built_once(tmp_path_factory, f"tiny_exports_{kind}", write)

    return LazyExports(ATTENTION_KINDS, build)


@pytest.fixture(scope="session")
def digits_export(tmp_path_factory):
    """A tiny softmax model over a character vocabulary without any letter (digits,
    punctuation, space), exported to ONNX once per run (``built_once``): (torch model,
    folder with ``digits.inspect.onnx`` and ``digits.fast.onnx``). The folder is
    read-only to tests."""
    from export.graphs import export_model
    from tests.helpers.shared import built_once

    model, tokenizer = digits_model()  # the same weights in every worker (seed 0)
    folder = built_once(
        tmp_path_factory, "digits", lambda f: export_model(model, f, tokenizer, prefix="digits")
    )  # exported once per run, the xdist workers sharing the folder
    return model, folder


@pytest.fixture(scope="session")
def tiny_seq2seq(tmp_path_factory):
    """Tiny random translation models of each kind exported into one folder:
    ``(folder, kind -> (torch model, vocabularies))`` (``tests/helpers/seq2seq.py``)."""
    from tests.helpers.seq2seq import tiny_translators
    from tests.helpers.shared import built_once

    folder = built_once(tmp_path_factory, "seq2seq", tiny_translators)
    return folder, tiny_translators(folder, export=False)


@pytest.fixture(scope="session")
def hf_exports(tmp_path_factory):
    """Issue #23's six exports of one random Hugging Face GPT-2, made once per session
    (``tests/helpers/hf_exports.py``): (the transformers model, label -> model.onnx path)."""
    from tests.helpers.hf_exports import SIX, export, hf_gpt2
    from tests.helpers.shared import built_once

    model = hf_gpt2()  # the same random weights in every worker (seed 0)
    folder = built_once(
        tmp_path_factory, "hf_exports", lambda f: [export(model, h, f) for h in SIX]
    )
    return model, {how.label: folder / how.label / "model.onnx" for how in SIX}


SESSION_TTL_S = 5  # seconds a test server keeps a closed tab's session


@pytest.fixture(scope="session")
def server():
    """The app on the shipped models, shared by every test of this process that needs a
    real server and does not test isolation (``deploy/launch.py``: ``url``, ``pid``,
    ``ws_url``, ``log()``); a closed tab's session is dropped ``SESSION_TTL_S`` after it
    closed (served: 30 s, .streamlit/config.toml), so a test sees its memory come back. Under ``make test`` the browser and live-bench tests run on
    one xdist worker (group ``browser``), so one server serves them all."""
    from deploy.launch import serve

    with serve(env={"STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL": str(SESSION_TTL_S)}) as running:
        yield running


@pytest.fixture(scope="session")
def server_url(server) -> str:
    return server.url
