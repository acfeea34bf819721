"""Uploads of the formats people have, through the app's own uploader (AppTest): a
Hugging Face folder shrunk by ``python -m upload.convert``, and a nanoGPT checkpoint with
GPT-2's vocabulary and its tokenizer.json. What only a browser shows of an upload (its
size refusal, a long sentence's layout) is in tests/e2e."""

from __future__ import annotations

import pytest

from tests.helpers.charts import plotly_charts
from tests.helpers.gpt2_folder import gpt2_model, save_folder
from tests.helpers.gpt2_tokenizer import gpt2_style_tokenizer
from tests.helpers.nanogpt_layout import ARGS, ckpt_bytes, nanogpt_state
from tests.helpers.pages import short_patching_pair
from tests.ui.test_upload import upload
from ui.text import plain
from ui.visualizer import VIEWS


def no_errors(at, where: str = "") -> None:
    assert not at.exception, (where, [e.value for e in at.exception])
    assert not at.error, (where, [e.value for e in at.error])


def axis(at) -> list[str]:
    """The token labels of the main heatmap's key axis."""
    return plotly_charts(at)[0].spec["data"][0]["x"]


@pytest.fixture(scope="module")
def converted_gpt2(tmp_path_factory) -> bytes:
    """A tiny random GPT-2 folder (2 layers x 2 heads) as the command writes it for upload."""
    from upload.convert import main

    base = tmp_path_factory.mktemp("gpt2")
    folder = save_folder(gpt2_model(seed=2), base / "tiny-gpt2")
    main([str(folder), "--out", str(base / "out")])
    return (base / "out" / "tiny-gpt2.safetensors").read_bytes()


@pytest.mark.slow
def test_a_converted_gpt2_folder_uploads_and_draws_every_view(converted_gpt2):
    at = upload([("tiny-gpt2.safetensors", converted_gpt2)])
    no_errors(at, "upload")
    assert at.radio(key="model").value == "upload"
    assert at.selectbox(key="layer").options == ["0", "1"]  # the tiny GPT-2's 2 layers
    assert at.selectbox(key="head").options == ["0", "1"]  # x 2 heads
    at.text_area(key="text").set_value("the cat sat on the mat.").run()
    no_errors(at, "text")
    for view in VIEWS:
        at.segmented_control(key="view").set_value(view).run()
        if view == "patch":
            short_patching_pair(at)
        no_errors(at, view)
        assert plotly_charts(at) or at.get("vega_lite_chart") or at.dataframe, view


@pytest.mark.slow
def test_a_gpt2_vocabulary_nanogpt_checkpoint_with_its_tokenizer_json():
    args = dict(ARGS, vocab_size=50304, block_size=32)  # GPT-2's 50,257 ids padded to 64
    ckpt = ckpt_bytes(nanogpt_state(args, seed=5), args)
    at = upload([("ckpt.pt", ckpt), ("tokenizer.json", gpt2_style_tokenizer(50257).encode())])
    no_errors(at, "upload")
    at.text_area(key="text").set_value("the cat sat on the mat").run()
    no_errors(at, "text")
    labels = axis(at)
    assert labels[:2] == ["0·the", "1·␣cat"], labels  # GPT-2's byte-level tokens
    notes = [c.value for c in at.caption]
    want = "50,304 token rows for the tokenizer's 50,257 ids: the last 47 are padding"
    assert any(plain(want) in n for n in notes), notes  # the model card's (escaped)
