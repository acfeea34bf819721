"""Two uploads in one session (#48 item 4): "Load as a second model" keeps the first, the
Compare models view shows them side by side, and B − A of the chosen head is drawn with
the numbers each model's own attention gives; models that cannot be subtracted get one
line saying why."""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from tests.helpers import ROOT
from tests.helpers.charts import plotly_charts
from tests.helpers.checkpoints import tiny_checkpoint
from tests.ui.test_app import decode
from ui import loaders, sentence_ids
from ui.upload_panel import TWO

CONFIG = dict(n_layer=2, n_head=2, d_model=16, d_mlp=32, context_length=16)
TEXT = "the cat sat on the mat ."


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory) -> dict[str, bytes]:
    """Two checkpoints of one architecture and tokenizer (different weights), and one
    with four heads."""
    folder = tmp_path_factory.mktemp("two")
    made = {
        "step1000.safetensors": tiny_checkpoint(folder / "a.safetensors", seed=0, **CONFIG),
        "step2000.safetensors": tiny_checkpoint(folder / "b.safetensors", seed=1, **CONFIG),
        "wide.safetensors": tiny_checkpoint(
            folder / "c.safetensors", seed=2, **dict(CONFIG, n_head=4)
        ),  # fmt: skip
    }
    return {name: path.read_bytes() for name, path in made.items()}


def _load(at: AppTest, name: str, data: bytes, button: str) -> None:
    at.file_uploader[0].set_value([(name, data, "application/octet-stream")]).run()
    at.button(key=button).click().run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]


def _heatmap(at: AppTest, key: str) -> np.ndarray:
    (chart,) = [c for c in plotly_charts(at) if c.key == key]
    (trace,) = [t for t in chart.spec["data"] if t["type"] == "heatmap"]
    return decode(trace["z"])


@pytest.mark.slow
def test_two_checkpoints_side_by_side_with_their_difference(checkpoints):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    assert not [b for b in at.button if b.key == "upload_go_2"]  # nothing to keep yet
    _load(at, "step1000.safetensors", checkpoints["step1000.safetensors"], "upload_go")
    assert any(TWO in c.value for c in at.caption)  # the limit, in plain sight
    _load(at, "step2000.safetensors", checkpoints["step2000.safetensors"], "upload_go_2")
    assert at.radio(key="model").options[-2:] == ["upload", "upload2"]
    first, second = (loaders.UPLOAD_SLOTS[k] for k in ("upload", "upload2"))
    model_a, model_b = at.session_state[first], at.session_state[second]
    assert "step1000" in model_a.name and "step2000" in model_b.name  # both kept
    assert at.radio(key="model").value == "upload"
    other = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    assert not {"upload", "upload2"} & set(other.radio(key="model").options)  # this session's
    at.text_area(key="text").set_value(TEXT).run()
    at.segmented_control(key="view").set_value("compare").run()
    at.selectbox(key="layer").set_value(1).run()
    at.selectbox(key="head").set_value(1).run()
    assert not at.exception and not at.error
    assert at.selectbox(key="vs").value == "upload2"  # the other upload stands beside
    keys = [c.key for c in plotly_charts(at)]
    assert keys == ["cmp_upload", "cmp_upload2", "cmp_diff"], keys

    ids = model_a.tokenizer.encode(TEXT, add_special_tokens=False).ids
    attn_a = model_a.inspect(ids)["attn"][1, 1]  # (T, T), each model run on its own
    attn_b = model_b.inspect(ids)["attn"][1, 1]
    assert np.abs(attn_b - attn_a).max() > 1e-3  # two different checkpoints
    np.testing.assert_allclose(_heatmap(at, "cmp_upload"), attn_a, atol=1e-6)
    np.testing.assert_allclose(_heatmap(at, "cmp_upload2"), attn_b, atol=1e-6)
    np.testing.assert_allclose(_heatmap(at, "cmp_diff"), attn_b - attn_a, atol=1e-6)
    assert any("B − A, layer 1, head 1" in str(c.spec["layout"]) for c in plotly_charts(at))

    # B replaced by a model of four heads: its own numbers, no difference, one line why
    _load(at, "wide.safetensors", checkpoints["wide.safetensors"], "upload_go_2")
    at.segmented_control(key="view").set_value("compare").run()
    assert not at.exception and not at.error
    assert "wide" in at.session_state[second].name
    assert "step1000" in at.session_state[first].name  # A stays
    keys = [c.key for c in plotly_charts(at)]
    assert keys == ["cmp_upload", "cmp_upload2"], keys
    why = [c.value for c in at.caption if "No difference drawn" in c.value]
    assert why and "2 layers × 2 heads, B 2 × 4" in why[0], why
    wide = at.session_state[second].inspect(ids)["attn"][1, 1]  # not the old B's figure
    np.testing.assert_allclose(_heatmap(at, "cmp_upload2"), wide, atol=1e-6)


def test_a_link_to_the_second_upload_says_it_lives_in_its_session():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params["model"] = "upload2"
    at.run()
    assert not at.exception
    assert at.radio(key="model").value == "softmax"
    assert any("lives only in the browser session" in w.value for w in at.warning)
    assert sentence_ids.KEY not in at.session_state
