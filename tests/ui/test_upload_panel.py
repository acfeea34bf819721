"""The uploader lets go of a loaded model's files (``ui.upload_panel``): Streamlit
deep-copies every widget's value on every run, so files left in it cost the session a
copy of their bytes a rerun."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.helpers import EXPORTED, ROOT
from tests.helpers.charts import plotly_charts
from ui.loaders import UPLOAD_KEY


def _load(at: AppTest, name: str) -> AppTest:
    data = (EXPORTED / name).read_bytes()
    at.file_uploader[0].set_value([(name, data, "application/octet-stream")]).run()
    at.button(key="upload_go").click().run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    return at


def test_a_loaded_model_leaves_the_uploader_empty_and_another_can_follow():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    assert at.file_uploader[0].key == "upload_files"
    _load(at, "softmax.inspect.onnx")
    assert at.radio(key="model").value == "upload"
    assert not at.file_uploader[0].value  # the files left with the load
    assert at.file_uploader[0].key == "upload_files_1"  # a new, empty widget
    assert plotly_charts(at), "the uploaded model's heads are shown"
    _load(at, "linear.inspect.onnx")  # the next upload replaces it
    assert at.radio(key="model").value == "upload" and not at.file_uploader[0].value
    assert at.selectbox(key="head").options == ["0", "1", "2", "3"]
    assert "linear" in at.session_state[UPLOAD_KEY].config.attention
