"""GPT-2-family folders in headless Chromium: a folder converted by the command line and
uploaded through "Inspect your own model", and a folder served to every session by
whoever runs the server (``streamlit run app.py -- --model DIR``)."""

from __future__ import annotations

import time

import pytest

from tests.e2e.conftest import streamlit_server
from tests.e2e.test_browser import plot_text, type_sentence, upload_files
from tests.helpers.browser import SCREENSHOTS, wait_idle
from tests.helpers.gpt2_folder import gpt2_model, save_folder
from ui.visualizer import VIEWS

SHOWN = ".js-plotly-plot, [data-testid='stVegaLiteChart'], [data-testid='stDataFrame']"


def visit_every_view(page) -> None:
    """Click through the seven views: each draws a figure or a table, none fails."""
    for view in VIEWS:
        page.locator(".st-key-view").get_by_text(view, exact=True).click()
        wait_idle(page)
        page.locator(SHOWN).first.wait_for()
        assert f"view={view}" in page.url or view == "attention"  # the default: not written
        assert not page.locator('[data-testid="stException"]').count(), view
        assert not page.locator('[data-testid="stAlertContentError"]').count(), view


def test_upload_a_converted_gpt2_folder_and_visit_every_view(page, server_url, tmp_path):
    from upload.convert import main

    folder = save_folder(gpt2_model(seed=2), tmp_path / "tiny-gpt2")
    main([str(folder), "--out", str(tmp_path / "out")])
    upload_files(page, server_url, [tmp_path / "out" / "tiny-gpt2.safetensors"])
    type_sentence(page, "the cat sat on the mat.")
    text = plot_text(page)
    assert "L1 H1" in text and "L2 H0" not in text  # the tiny GPT-2's 2 layers x 2 heads
    visit_every_view(page)
    page.screenshot(path=str(SCREENSHOTS / "uploaded_gpt2.png"), full_page=True)


@pytest.fixture(scope="module")
def served_server(tmp_path_factory):
    """The app serving a tiny GPT-2 folder beside the shipped models, converted into a
    fresh cache when the server starts."""
    base = tmp_path_factory.mktemp("served")
    folder = save_folder(gpt2_model(seed=4), base / "tiny-gpt2")
    env = {"ATTNVIZ_CACHE_DIR": str(base / "cache")}
    with streamlit_server(["--model", str(folder)], env) as running:
        yield running


def test_a_served_folder_is_in_the_model_radio_with_its_heatmap(page, served_server):
    deadline = time.monotonic() + 180  # the first start converts the folder
    while True:
        page.goto(f"{served_server.url}/?model=tiny-gpt2&text=the+cat+sat")
        wait_idle(page)
        if page.get_by_role("radio", name="tiny-gpt2").count() or time.monotonic() > deadline:
            break
        assert "Preparing tiny-gpt2/ for this server" in page.inner_text("body")
        time.sleep(2)
    assert page.get_by_role("radio", name="tiny-gpt2").is_checked()
    assert "tiny-gpt2/ (served)" in page.inner_text("body")
    page.locator(".st-key-attn_big .js-plotly-plot").wait_for()
    assert "L1 H1" in plot_text(page)
    visit_every_view(page)
    log = served_server.log()
    assert "[served models] tiny-gpt2: serving" in log and "Traceback" not in log, log[-2000:]
