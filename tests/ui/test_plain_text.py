"""User-supplied strings reach Streamlit's markdown as plain text (AppTest).

File names, the model name ("upload: <file name>"), unknown words and tokens are
escaped with ``ui.text.plain``: a markdown image in a file name must not become
an ``<img>`` that fetches a remote URL.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.helpers import ROOT
from tests.helpers.checkpoints import tiny_checkpoint
from ui.text import plain

APP = str(ROOT / "app.py")
IMAGE = "![x](http://example.com/a.png)"
NAME = f"{IMAGE} :red[red] $x^2$ <b>b</b> :material/visibility:"


def bodies(at: AppTest) -> list[str]:
    """The bodies of every markdown-rendering element on the page and in the sidebar."""
    kinds = ("markdown", "caption", "error", "warning", "info", "success")
    return [el.value for kind in kinds for el in at.get(kind)]


def no_raw_markup(at: AppTest) -> None:
    for body in bodies(at):
        for raw in (IMAGE, ":red[", "$x^2$", "<b>", ":material/visibility:"):
            assert raw not in body, body


def upload(files: list[tuple[str, bytes]]) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180).run()
    at.file_uploader(key="upload_files").set_value(
        [(name, data, "application/octet-stream") for name, data in files]
    ).run()
    return at.button(key="upload_go").click().run()


@pytest.mark.parametrize("suffix", [".onnx", ".pt"])
def test_a_refused_file_name_is_plain_text(suffix):
    at = upload([(NAME + suffix, b"not a model")])
    assert not at.exception, [e.value for e in at.exception]
    (error,) = at.error
    assert error.value.startswith("Not loaded: ")
    assert plain(NAME + suffix) in error.value  # the name is there, escaped
    no_raw_markup(at)


@pytest.mark.slow
def test_an_uploaded_model_name_is_plain_text(tmp_path):
    path = tiny_checkpoint(
        tmp_path / "model.safetensors", n_layer=1, n_head=2, d_model=16, d_mlp=32
    )
    at = upload([(NAME + ".safetensors", path.read_bytes())])
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.radio(key="model").value == "upload"
    card = [md.value for md in at.sidebar.markdown]
    assert any(f"**{plain('upload: ' + NAME + '.safetensors')}**" in v for v in card), card
    no_raw_markup(at)


def test_unknown_words_and_tokens_are_plain_text():
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["text"] = f"the cat {IMAGE} *sat*"
    at.run()
    assert not at.exception
    (warning,) = [w for w in at.warning if "vocabulary" in w.value]
    assert "http" in warning.value and "example" in warning.value  # unknown words listed
    no_raw_markup(at)
    at.segmented_control(key="view").set_value("predict").run()
    options = at.select_slider(key="pred_pos").options  # option labels render markdown
    assert any("\\*" in o for o in options), options
    assert not any("*" in o.replace("\\*", "") for o in options), options
    for view in ("mask", "compare"):  # markdown lines that quote a token
        at.segmented_control(key="view").set_value(view).run()
        assert not at.exception
        no_raw_markup(at)
