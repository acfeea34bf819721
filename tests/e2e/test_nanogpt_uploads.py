"""A nanoGPT checkpoint over the uploader's 50 MB (its optimizer state), in headless
Chromium: the browser itself refuses the file, and the page names the command that
shrinks it. (The command's conversion, and uploads of what it writes, are tested without
a browser: tests/upload/test_local.py, tests/ui/test_upload.py.)"""

from __future__ import annotations

from tests.helpers.browser import wait_idle
from tests.helpers.nanogpt_layout import LARGE_ARGS, write_checkpoint
from upload.limits import MAX_UPLOAD_BYTES

COMMAND = "python -m upload.convert ckpt.pt --meta meta.pkl --out converted/"


def test_a_large_nanogpt_checkpoint_is_refused_by_the_browser_with_the_command(
    page, server_url, tmp_path
):
    """The uploader drops the 58.6 MB ckpt.pt before any code of ours sees it (AppTest
    cannot: its uploader takes any size); the page says why and names the command."""
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
    assert "meta.pkl: only a vocabulary" in error.inner_text()
    assert "converted/ckpt.safetensors" in error.inner_text()
