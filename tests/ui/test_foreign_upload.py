"""A foreign ONNX language model (a plain torch export, with its tokenizer.json) through the
app's own uploader (AppTest): every view and lesson draws or says in one line what the
graph lacks; a graph without attention is refused with what was looked for."""

from __future__ import annotations

import base64

import pytest
from streamlit.testing.v1 import AppTest
from tokenizers import Tokenizer

from tests.helpers import ROOT
from tests.helpers.charts import plotly_charts
from tests.helpers.foreign_lm import char_tokenizer_json, export, tiny_lm
from tests.helpers.nanogpt_layout import V
from tests.helpers.pages import open_page
from tests.ui.test_upload import assert_usable, refused_and_still_usable, upload
from ui.lab_view import NO_LAB
from ui.visualizer import VIEWS


@pytest.fixture(scope="module")
def foreign_files() -> list[tuple[str, bytes]]:
    graph = export(tiny_lm(V, "softmax", seed=5, L=2, H=3, C=24))
    return [("model.onnx", graph), ("tokenizer.json", char_tokenizer_json())]


def errors(at) -> list:
    return [e.value for e in [*at.exception, *at.error]]


def chart(at, key: str) -> dict:
    return next(c for c in plotly_charts(at) if c.key == key).spec


@pytest.mark.slow
def test_a_foreign_graph_drives_every_view_and_lesson(foreign_files):
    at = upload(foreign_files)
    assert not errors(at), errors(at)
    assert at.radio(key="model").value == "upload"
    assert at.selectbox(key="layer").options == ["0", "1"]
    assert at.selectbox(key="head").options == ["0", "1", "2"]  # 3 heads found per Softmax
    card = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
    assert "d\\_model unknown" in card or "d_model unknown" in card
    assert "ONNX (foreign)" in card and "2 attention layers found" in card  # nothing escaped
    at.text_area(key="text").set_value("Speak, speak.").run()
    assert_usable(at)
    assert chart(at, "attn_big")["layout"]["title"]["text"] == "Layer 0, head 0"
    lacking = {
        "shapes": "needs queries Q, keys K, values V",
        "positional": "needs the positional encoding",
        **dict.fromkeys(("ablate", "patch", "lens"), "has no hand on its heads"),
    }
    for view in VIEWS:
        at.segmented_control(key="view").set_value(view).run()
        assert not errors(at), (view, errors(at))
        infos = " ".join(i.value for i in at.info)
        if view in ("ablate", "patch", "lens"):  # the lab views: one line, no controls
            assert [i.value for i in at.info if lacking[view] in i.value] == [NO_LAB], view
        elif view in lacking:
            assert lacking[view] in infos and "not made by this project" in infos, view
    at.segmented_control(key="view").set_value("mask").run()
    titles = [a["text"] for a in chart(at, "mask_panels")["layout"]["annotations"]]
    assert titles[0] == "what the Softmax receives (mask included)"
    assert any("softmax attention, which has no recurrence" in c.value for c in at.caption)
    at.segmented_control(key="view").set_value("stats").run()
    assert len(at.dataframe[0].value) == 2 * 3  # one row per head
    for page in ("soft-hard", "scoring", "kernel", "merged"):
        open_page(page, at)
        assert not at.exception, (page, [e.value for e in at.exception])
        assert at.radio(key="model").value == "upload"
        assert any("needs queries Q, keys K" in i.value for i in at.info), page


def test_a_graph_without_attention_is_refused_with_one_line():
    graph = export(tiny_lm(V, "none"), dynamo=False)
    at = upload([("model.onnx", graph), ("tokenizer.json", char_tokenizer_json())])
    refused_and_still_usable(
        at, "model.onnx: no attention found: looked for Softmax nodes whose output is"
    )


@pytest.mark.slow
def test_hugging_face_exports_load_through_the_uploader_and_every_view_draws(hf_exports, tmp_path):
    """Issue #23's six exports (the external-data one folded by the command line) through
    the app's own uploader, one after the other in one session: each loads, every view
    draws, and a fixed-length graph shows the sentence's own tokens only."""
    from tests.helpers.hf_exports import tokenizer_json
    from upload.convert import fold_onnx

    paths = dict(hf_exports[1])
    for label, path in list(paths.items()):
        if label.endswith("-external"):
            paths[label] = fold_onnx(path, tmp_path / label)
    text = "Before we proceed any further"
    n = len(Tokenizer.from_str(tokenizer_json().decode()).encode(text).ids)  # 16
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    at.text_area(key="text").set_value(text).run()
    for label, path in paths.items():
        files = [("model.onnx", path.read_bytes()), ("tokenizer.json", tokenizer_json())]
        at.file_uploader[0].set_value(
            [(name, data, "application/octet-stream") for name, data in files]
        ).run()
        at.button(key="upload_go").click().run()
        assert not errors(at), (label, errors(at))
        assert at.radio(key="model").value == "upload", label
        assert at.selectbox(key="head").options == ["0", "1", "2", "3"], label
        at.segmented_control(key="view").set_value("attention").run()
        z = chart(at, "attn_big")["data"][0]["z"]  # plotly's binary array: float32 values
        cells = len(base64.b64decode(z["bdata"])) // 4
        assert cells == n * n, label  # its tokens, not the 64 a fixed graph runs on
        assert_usable(at)
        for view in VIEWS:
            at.segmented_control(key="view").set_value(view).run()
            assert not errors(at), (label, view, errors(at))
