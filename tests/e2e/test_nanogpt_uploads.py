"""nanoGPT checkpoints as people have them, in headless Chromium: one over the uploader's
50 MB (its optimizer state) shrunk by the command the page names, and one with GPT-2's
vocabulary uploaded with a tokenizer.json (built here: nothing is downloaded)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.e2e.test_browser import plot_text, type_sentence, upload_files
from tests.helpers import ROOT
from tests.helpers.browser import SCREENSHOTS, wait_idle
from tests.helpers.gpt2_tokenizer import gpt2_style_tokenizer
from tests.helpers.nanogpt_layout import (
    ARGS,
    LARGE_ARGS,
    ckpt_bytes,
    nanogpt_state,
    write_checkpoint,
)
from upload.limits import MAX_UPLOAD_BYTES

COMMAND = "python -m upload.convert ckpt.pt --meta meta.pkl --out converted/"
VIEWS = ("attention", "compare", "shapes", "positional", "mask", "stats", "predict")  # predict last


def no_exception(page, where: str) -> None:
    assert not page.locator('[data-testid="stException"]').count(), where
    assert not page.locator('[data-testid="stAlertContentError"]').count(), (
        where,
        page.locator('[data-testid="stAlertContentError"]').all_inner_texts(),
    )


def open_view(page, view: str) -> None:
    page.locator(".st-key-view").get_by_text(view, exact=True).click()
    wait_idle(page)
    no_exception(page, view)


def test_a_large_nanogpt_checkpoint_shrunk_by_the_named_command(page, server_url, tmp_path):
    """The whole path: the uploader refuses the 58.6 MB ckpt.pt, the page names the command,
    the command writes a 19.5 MB file, and that file shows a prompt with newlines: ⏎ and ␣
    on the heatmap's axes and in Predictions, every view without an error."""
    _, ckpt, meta = write_checkpoint(tmp_path, LARGE_ARGS)
    assert ckpt.stat().st_size > MAX_UPLOAD_BYTES
    page.goto(server_url)
    wait_idle(page)
    page.get_by_text("Inspect your own model").click()
    caption = page.get_by_text(COMMAND).first
    caption.wait_for()
    assert caption.is_visible()  # in plain sight, not in a tooltip
    page.locator('[data-testid="stFileUploader"] input[type=file]').set_input_files(
        [str(ckpt), str(meta)]
    )  # the uploader keeps meta.pkl only: ckpt.pt is over its limit
    page.get_by_role("button", name="Load uploaded model").click()
    wait_idle(page)
    error = page.locator('[data-testid="stAlertContentError"]')
    assert error.count() == 1 and COMMAND in error.inner_text(), error.all_inner_texts()
    assert "converted/ckpt.safetensors" in error.inner_text()

    done = subprocess.run(
        [sys.executable, "-m", "upload.convert", "ckpt.pt", "--meta", "meta.pkl"]
        + ["--out", "converted/"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    converted = tmp_path / "converted" / "ckpt.safetensors"
    assert converted.stat().st_size < MAX_UPLOAD_BYTES

    upload_files(page, server_url, [converted])
    type_sentence(page, "ROMEO:\nO speak")
    page.locator(".st-key-attn_big .js-plotly-plot").wait_for()
    axes = plot_text(page)
    assert "6·⏎" in axes and "8·␣" in axes, axes[:500]  # R O M E O : ⏎ O ␣ s p e a k
    for view in VIEWS:
        open_view(page, view)
    page.locator(".st-key-topk .js-plotly-plot").wait_for()
    page.get_by_text("Top 3 next tokens at every position").wait_for()
    # the table is drawn on a canvas; its cells are in the grid's accessible DOM table
    cells = page.locator('[data-testid="stDataFrame"] [role="gridcell"]').all_text_contents()
    assert cells[1:2] == ["R"] and "⏎" in cells and "␣" in cells, cells[:40]
    assert "" not in cells and " " not in cells  # no blank token, no blank prediction
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "nanogpt_predictions.png"), full_page=True)


def test_a_gpt2_vocabulary_nanogpt_checkpoint_with_its_tokenizer_json(page, server_url, tmp_path):
    args = dict(ARGS, vocab_size=50304, block_size=32)  # GPT-2's 50,257 ids padded to 64
    ckpt, tokenizer = tmp_path / "ckpt.pt", tmp_path / "tokenizer.json"
    ckpt.write_bytes(ckpt_bytes(nanogpt_state(args, seed=5), args))
    tokenizer.write_text(gpt2_style_tokenizer(50257))
    upload_files(page, server_url, [ckpt, tokenizer])
    type_sentence(page, "the cat sat on the mat")
    page.locator(".st-key-attn_big .js-plotly-plot").wait_for()
    axes = plot_text(page)
    assert "0·the" in axes and "1·␣cat" in axes, axes[:500]  # GPT-2's byte-level tokens
    no_exception(page, "attention")
    page.get_by_text("Model card").click()
    note = page.get_by_text("the last 47 are padding", exact=False)
    note.wait_for()
    assert "50,304 token rows for the tokenizer's 50,257 ids" in note.inner_text()
