"""End to end in headless Chromium: a Hugging Face GPT-2 as people export it (issue #23),
uploaded with its tokenizer.json through the browser's own uploader. Every view of a
foreign graph is drawn by the AppTests (tests/ui/test_foreign_upload.py)."""

from __future__ import annotations

from tests.e2e.test_browser import plot_text, type_sentence, upload_files


def test_upload_a_hugging_face_gpt2_export_of_fixed_length(page, server_url, tmp_path):
    """A Hugging Face GPT-2 exported by the TorchScript exporter with an attention_mask
    and a fixed 64 tokens (issue #23): a short sentence is padded, its own tokens shown."""
    from tests.helpers.hf_exports import Export, export, hf_gpt2, tokenizer_json

    graph = export(hf_gpt2(), Export(dynamo=False, mask=True, fixed_T=64), tmp_path)
    tokenizer = tmp_path / "tokenizer.json"
    tokenizer.write_bytes(tokenizer_json())
    upload_files(page, server_url, [graph, tokenizer])
    page.get_by_text("Model card").click()
    page.get_by_text("The graph takes a fixed 64 tokens").wait_for()
    type_sentence(page, "Speak, speak.")
    page.locator(".st-key-attn_big .js-plotly-plot").wait_for()
    text = plot_text(page)
    assert "L1 H3" in text and "L1 H4" not in text and "L2 H0" not in text  # 2 x 4 heads
    assert "<|endoftext|>" not in text  # the padding is never shown
    assert not page.locator('[data-testid="stException"]').count()
