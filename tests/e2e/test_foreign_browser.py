"""End to end in headless Chromium: a plain torch language model exported with
``torch.onnx.export``, uploaded with its tokenizer.json, shows its attention in every view."""

from __future__ import annotations

from tests.e2e.test_browser import plot_text, type_sentence, upload_files
from tests.helpers.browser import SCREENSHOTS, wait_idle
from tests.helpers.foreign_lm import char_tokenizer_json, export, tiny_lm
from tests.helpers.nanogpt_layout import V
from ui.visualizer import VIEWS


def test_upload_a_foreign_onnx_graph_and_visit_every_view(page, server_url, tmp_path):
    graph, tokenizer = tmp_path / "model.onnx", tmp_path / "tokenizer.json"
    graph.write_bytes(export(tiny_lm(V, "sdpa", seed=6, L=2, H=3, C=24)))
    tokenizer.write_bytes(char_tokenizer_json())
    upload_files(page, server_url, [graph, tokenizer])
    type_sentence(page, "Speak, speak.")
    page.locator(".st-key-attn_big .js-plotly-plot").wait_for()
    text = plot_text(page)
    assert "L1 H2" in text and "L0 H3" not in text  # 2 layers x 3 heads found
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "foreign_onnx.png"), full_page=True)
    for view in [*list(VIEWS)[1:], "attention"]:  # the default view last: back to it
        page.locator(".st-key-view").get_by_text(view, exact=True).click()
        wait_idle(page)
        assert f"view={view}" in page.url or view == "attention"  # the default is not written
        assert not page.locator('[data-testid="stException"]').count(), view
        body = page.inner_text("body")
        assert "This model failed" not in body, view
        if view == "shapes":
            assert "needs queries Q, keys K, values V" in body
        if view == "mask":
            page.locator(".st-key-mask_panels .js-plotly-plot").wait_for()
            assert "what the Softmax receives" in plot_text(page)
            page.screenshot(path=str(SCREENSHOTS / "foreign_mask.png"), full_page=True)
    assert not page.locator('[data-testid="stException"]').count()


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
