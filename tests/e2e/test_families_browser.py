"""A Llama folder (grouped-query attention, rotary positions) converted by the command
line and uploaded in headless Chromium: the attention view's title names the query heads
sharing its key/value head, and the positional view draws RoPE's wavelengths and the
offset curve measured from the model's own q and k."""

from __future__ import annotations

import contextlib
import io
import re

import pytest
from playwright.sync_api import expect

from tests.e2e.test_browser import upload_files
from tests.helpers.browser import wait_idle, wait_plot
from tests.helpers.family_folders import family_model, save_family_folder
from upload.convert import main

TEXT = "the cat sat on the mat and the dog"


def test_an_uploaded_llama_shows_its_shared_heads_and_rotary_positions(page, server_url, tmp_path):
    folder = save_family_folder(family_model("llama"), tmp_path / "tiny-llama")
    with contextlib.redirect_stdout(io.StringIO()):
        main([str(folder), "--out", str(tmp_path / "out")])
    upload_files(page, server_url, [tmp_path / "out" / "tiny-llama.safetensors"])
    box = page.get_by_role("textbox", name="Type a sentence")
    box.fill(TEXT)
    box.press("Control+Enter")
    wait_idle(page)
    page.get_by_role("combobox", name="Head").click()
    page.get_by_role("option", name="3", exact=True).click()
    wait_idle(page)
    wait_plot(page, "attn_big")
    title = page.evaluate(
        "() => document.querySelector('.st-key-attn_big .js-plotly-plot').layout.title.text"
    )
    assert title.endswith("head 3 · key/value head 1, shared by heads 2–3"), title
    page.locator(".st-key-view").get_by_text("positional", exact=True).click()
    wait_idle(page)
    for key in ("rope_waves", "rope_offsets"):
        wait_plot(page, key)
    bars = page.evaluate(
        "() => Array.from(document.querySelector('.st-key-rope_waves .js-plotly-plot')._fullData[0].y)"
    )
    assert len(bars) == 4 and bars == sorted(bars)  # d_head 8: 4 pairs, slower and slower
    caption = page.get_by_text(re.compile("the curve moves by at most"))
    expect(caption).to_be_visible()
    moved, differ = map(float, re.findall(r"(\d\.\de[+-]\d+)", caption.inner_text())[:2])
    assert moved < 1e-4 and differ < 1e-4, caption.inner_text()
    assert not page.locator('[data-testid="stException"]').count()


@pytest.mark.parametrize("family", ["mistral", "qwen2", "gpt_neox", "gpt_neo"])
def test_each_family_s_converted_folder_uploads_in_the_browser(page, server_url, tmp_path, family):
    """A random 2-layer folder of each other family converts by the command line (it
    returns only when it wrote the file) and its file loads through the uploader; the
    attention view draws with no error."""
    folder = save_family_folder(family_model(family), tmp_path / f"tiny-{family}")
    with contextlib.redirect_stdout(io.StringIO()):
        main([str(folder), "--out", str(tmp_path / "out")])
    upload_files(page, server_url, [tmp_path / "out" / f"tiny-{family}.safetensors"])
    wait_plot(page, "attn_big")
    assert not page.locator('[data-testid="stException"]').count()
    assert not page.locator('[data-testid="stAlertContentError"]').count()
