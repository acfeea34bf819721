"""A Hugging Face folder whose full context the uploader refuses, converted with
``--context`` into one it accepts, uploaded as a student would (issue #24, item 3)."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

from bench.gpt2_small import write_folder
from tests.helpers import ROOT
from ui.loaders import UPLOAD_KEY
from upload.convert import main
from upload.limits import MAX_ACTIVATION_ELEMENTS
from upload.sizes import longest_context

SIZES = dict(n_layer=2, n_head=4, n_embd=64)  # GPT-2's 50,257 ids and 1,024 positions


def _cli(*args: str) -> str:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        main(list(args))
    return printed.getvalue()


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return write_folder(tmp_path_factory.mktemp("ctx") / "small-gpt2", seed=5, **SIZES)


@pytest.mark.slow
def test_a_long_context_folder_converts_with_context_256_and_uploads(folder):
    """At its full context the folder's outputs are 263 MB (logits 1,024 x 50,257: three
    quarters of them; ``tests/upload/test_sizes.py``); at 256 tokens it uploads, and the
    uploaded model equals ``transformers``' on 256 tokens."""
    printed = _cli(str(folder), "--out", str(folder.parent / "short"), "--context", "256")
    path = folder.parent / "short" / "small-gpt2.safetensors"
    assert f"upload {path} in the app" in printed, printed

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    at.file_uploader(key="upload_files").set_value(
        [(path.name, path.read_bytes(), "application/octet-stream")]
    ).run()
    at.button(key="upload_go").click().run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    assert at.radio(key="model").value == "upload"
    model = at.session_state[UPLOAD_KEY]
    assert model.config.context_length == 256
    assert any("Context shortened from 1,024 to 256 tokens" in n for n in model.card.notes)
    at.text_area(key="text").set_value("the cat sat on the mat. " * 20).run()  # > 256 tokens
    assert not at.exception and not at.error
    assert any("only the first 256 are shown" in w.value for w in [*at.info, *at.warning,
                                                                     *at.caption])  # fmt: skip

    from transformers import GPT2LMHeadModel  # the test-only oracle

    reference = GPT2LMHeadModel.from_pretrained(folder, attn_implementation="eager").eval()
    ids = list(range(100, 100 + 256))  # (T,) at the shortened context
    with torch.no_grad():
        want = reference(torch.tensor([ids]), output_attentions=True)
    got = model.inspect(ids)
    logits = want.logits[0].numpy()
    assert np.abs(got["logits"][0] - logits).max() <= 1e-4 * np.abs(logits).max()
    attn = torch.stack([a[0] for a in want.attentions]).numpy()
    assert np.abs(got["attn"] - attn).max() <= 1e-5
    assert 256 <= longest_context(model.config, MAX_ACTIVATION_ELEMENTS)
