"""Uploads through the app's own file uploader (AppTest): good files load, hostile ones
are refused with a message and the previous model stays usable."""

from __future__ import annotations

import pickle

import pytest
import torch
from streamlit.testing.v1 import AppTest

from models.checkpoint import save_checkpoint
from models.config import ModelConfig
from models.tokenizer import build_tokenizer
from models.transformer import Transformer
from tests.conftest import ROOT
from tests.nanogpt_layout import ARGS, ckpt_bytes, meta_bytes, nanogpt_state


class _WritesFile:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (str(self.path), "w"))


@pytest.fixture(scope="module")
def our_checkpoint(tmp_path_factory) -> bytes:
    tok = build_tokenizer(["the cat sat on the mat .", "the dogs are in the park ."])
    torch.manual_seed(0)
    cfg = ModelConfig(
        vocab_size=tok.get_vocab_size(),
        n_layer=2,
        n_head=2,
        d_model=16,
        d_mlp=32,
        context_length=16,
        attention="linear",
    )
    path = tmp_path_factory.mktemp("ckpt") / "mine.safetensors"
    save_checkpoint(path, Transformer(cfg), tok)
    return path.read_bytes()


def upload(files: list[tuple[str, bytes]]) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    at.file_uploader(key="upload_files").set_value(
        [(name, data, "application/octet-stream") for name, data in files]
    ).run()
    at.button(key="upload_go").click().run()
    return at


def assert_usable(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert at.get("plotly_chart"), "the page should still show the attention figures"


def test_our_checkpoint_uploads_and_shows_heads(our_checkpoint):
    at = upload([("mine.safetensors", our_checkpoint)])
    assert not at.exception and not at.error
    assert at.radio(key="model").value == "upload"
    assert at.selectbox(key="head").options == ["0", "1"]  # the uploaded model's 2 heads
    at.text_area(key="text").set_value("the cat sat").run()
    assert_usable(at)
    for view in ("mask", "positional", "stats", "shapes"):
        at.segmented_control(key="view").set_value(view).run()
        assert not at.exception, view


def test_nanogpt_checkpoint_uploads_with_learned_positions():
    ckpt = ckpt_bytes(nanogpt_state(ARGS), ARGS, prefix="_orig_mod.")
    at = upload([("ckpt.pt", ckpt), ("meta.pkl", meta_bytes())])
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.radio(key="model").value == "upload"
    at.text_area(key="text").set_value("Speak, speak.").run()
    at.segmented_control(key="view").set_value("positional").run()
    assert not at.exception
    assert any("learned" in c.value for c in at.caption)


def test_uploaded_model_stays_in_its_session(our_checkpoint):
    upload([("mine.safetensors", our_checkpoint)])
    other = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    assert "upload" not in other.radio(key="model").options


def hostile_files(tmp_path):
    marker = tmp_path / "pwned"
    bad_pickle = pickle.dumps({"stoi": _WritesFile(marker)})
    return marker, {
        "code in meta.pkl": [
            ("ckpt.pt", ckpt_bytes(nanogpt_state(ARGS), ARGS)),
            ("meta.pkl", bad_pickle),
        ],
        "truncated": [("half.safetensors", b'\x10\x00\x00\x00\x00\x00\x00\x00{"a":')],
        "renamed": [("model.onnx", b"PK\x03\x04 not really")],
        "empty": [("empty.pt", b"")],
    }


@pytest.mark.parametrize("case", ["code in meta.pkl", "truncated", "renamed", "empty"])
def test_hostile_uploads_are_refused_and_app_stays_usable(tmp_path, case):
    marker, cases = hostile_files(tmp_path)
    at = upload(cases[case])
    assert not at.exception
    assert at.error and at.error[0].value.startswith("Not loaded:")
    assert not marker.exists()
    assert at.radio(key="model").value == "softmax"  # the previous model is still in use
    assert_usable(at)
