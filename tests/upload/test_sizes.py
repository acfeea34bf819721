"""One sizing function for every context check: the uploader's refusal, the command
line's ``--context`` advice and a foreign graph's context chooser count the same values
(logits T·V included), so the context one picks is one the other accepts."""

from __future__ import annotations

import dataclasses

import pytest

from models.config import ModelConfig
from upload.errors import UploadError
from upload.limits import BROWSER, MAX_ACTIVATION_ELEMENTS, MAX_FOREIGN_CONTEXT
from upload.onnx_foreign import _config_fields
from upload.sizes import activation_elements, check_config_size, longest_context

# GPT-2's vocabulary on 2 layers x 4 heads x 64 wide, context 1,024 (issue #24).
SMALL_GPT2 = ModelConfig(
    vocab_size=50257, n_layer=2, n_head=4, d_model=64, d_mlp=256, context_length=1024,
    position_scheme="learned",
)  # fmt: skip


def test_the_count_includes_the_logits_and_the_refusal_names_what_fits():
    assert activation_elements(SMALL_GPT2) == 68_961_280  # as the issue measured it
    assert activation_elements(SMALL_GPT2, outputs=["logits"]) == 1024 * 50257
    fits = longest_context(SMALL_GPT2, MAX_ACTIVATION_ELEMENTS)
    assert activation_elements(SMALL_GPT2, fits) <= MAX_ACTIVATION_ELEMENTS
    assert activation_elements(SMALL_GPT2, fits + 1) > MAX_ACTIVATION_ELEMENTS
    with pytest.raises(UploadError) as refused:
        check_config_size("gpt2.safetensors", SMALL_GPT2)
    line = str(refused.value)
    assert "(263 MB; limit 256 MB): logits 1,024 x 50,257 = 51,463,168" in line, line
    assert line.endswith(
        f"the longest context that fits is {fits} tokens: convert it with "
        f"python -m upload.convert ... --context {fits} --out converted/"
    )
    check_config_size("gpt2.safetensors", dataclasses.replace(SMALL_GPT2, context_length=fits))


@pytest.mark.parametrize("outputs", [["logits", "attn"], ["logits", "attn", "masked_scores"]])
def test_a_foreign_graphs_chosen_context_passes_the_servers_check(outputs):
    """GPT-2 small exported by torch (12 x 12 heads, 50,257 ids): the chooser's context
    is the longest the server's check accepts, counting the outputs the graph returns."""
    cfg = ModelConfig(**_config_fields(50257, 12, 12, MAX_FOREIGN_CONTEXT))
    fits = longest_context(cfg, BROWSER.activations, outputs)
    chosen = ModelConfig(**_config_fields(50257, 12, 12, fits))
    check_config_size("model.onnx", chosen, BROWSER, outputs)  # accepted
    longer = ModelConfig(**_config_fields(50257, 12, 12, fits + 1))
    with pytest.raises(UploadError, match="export it with that context"):
        check_config_size("model.onnx", longer, BROWSER, outputs)
