"""Uploads through the app's own file uploader (AppTest): good files load, hostile ones
are refused with a message and the previous model stays usable."""

from __future__ import annotations

import pickle

import onnx
import pytest
import torch
from streamlit.testing.v1 import AppTest

from models.checkpoint import save_checkpoint
from models.config import ModelConfig
from models.tokenizer import build_tokenizer
from models.transformer import Transformer
from tests.helpers import ROOT, hostile, hostile_onnx
from tests.helpers.charts import plotly_charts
from tests.helpers.checkpoints import DIGITS
from tests.helpers.nanogpt_layout import ARGS, ckpt_bytes, meta_bytes, nanogpt_state
from ui.text import plain
from upload.limits import MAX_ZIP_UNCOMPRESSED
from upload.onnx_contract import trial_inputs


class _WritesFile:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (str(self.path), "w"))


def checkpoint_bytes(folder, nan_weight: str | None = None) -> bytes:
    """A tiny linear-attention checkpoint of ours; ``nan_weight`` gets one NaN."""
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
    model = Transformer(cfg)
    if nan_weight:
        with torch.no_grad():
            model.get_parameter(nan_weight).view(-1)[0] = float("nan")
    path = folder / "mine.safetensors"
    save_checkpoint(path, model, tok)
    return path.read_bytes()


@pytest.fixture(scope="module")
def our_checkpoint(tmp_path_factory) -> bytes:
    return checkpoint_bytes(tmp_path_factory.mktemp("ckpt"))


@pytest.fixture(scope="module")
def digits_onnx(digits_export) -> dict[str, bytes]:
    """The letter-free character model's inspect and fast graphs, as uploaded files."""
    folder = digits_export[1]
    return {p.name: p.read_bytes() for p in sorted(folder.glob("digits.*.onnx"))}


def upload(files: list[tuple[str, bytes]]) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    at.file_uploader(key="upload_files").set_value(
        [(name, data, "application/octet-stream") for name, data in files]
    ).run()
    at.button(key="upload_go").click().run()
    return at


def assert_usable(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert plotly_charts(at), "the page should still show the attention figures"


@pytest.mark.slow
def test_our_checkpoint_uploads_and_shows_heads(our_checkpoint):
    at = upload([("mine.safetensors", our_checkpoint)])
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    assert at.radio(key="model").value == "upload"
    assert at.selectbox(key="head").options == ["0", "1"]  # the uploaded model's 2 heads
    at.text_area(key="text").set_value("the cat sat").run()
    assert_usable(at)
    for view in ("mask", "positional", "stats", "shapes"):
        at.segmented_control(key="view").set_value(view).run()
        assert not at.exception, view
    at.segmented_control(key="view").set_value("compare").run()  # beside the other kind
    assert not at.exception and not at.error
    keys = [c.key for c in plotly_charts(at)]
    assert keys == ["cmp_upload", "cmp_softmax"]  # a linear upload beside shipped softmax
    assert any("Your model" in m.value for m in at.markdown)


@pytest.mark.slow
def test_nanogpt_checkpoint_uploads_with_learned_positions():
    ckpt = ckpt_bytes(nanogpt_state(ARGS), ARGS, prefix="_orig_mod.")
    at = upload([("ckpt.pt", ckpt), ("meta.pkl", meta_bytes())])
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.radio(key="model").value == "upload"
    assert at.selectbox(key="layer").options == ["0", "1"]  # nanoGPT's 2 layers x 2 heads
    assert at.selectbox(key="head").options == ["0", "1"]  # (torch.compile's prefix read)
    at.text_area(key="text").set_value("Speak, speak.").run()
    at.segmented_control(key="view").set_value("positional").run()
    assert not at.exception
    assert any("learned" in c.value for c in at.caption)


def test_an_uploaded_graph_generates_in_its_worker_with_the_chosen_sampling(digits_onnx):
    at = upload(list(digits_onnx.items()))
    assert not at.exception and at.radio(key="model").value == "upload"
    at.text_area(key="text").set_value("12+3=").run()
    at.segmented_control(key="view").set_value("predict").run()
    at.radio(key="gen_mode").set_value("sample").run()
    at.number_input(key="gen_seed").set_value(9).run()
    rows = []
    for _ in range(2):
        at.button(key="generate").click().run()
        assert not at.exception and not at.error, [e.value for e in at.error]
        (success,) = at.success
        table = at.dataframe[-1].value
        rows.append(list(zip(table["token"], table["p"], strict=True)))
        assert success.value.startswith("12+3=") and "seed 9" in success.value  # nothing to escape
    assert rows[0] == rows[1] and all(0.0 < p <= 1.0 for _, p in rows[0])


def test_whitespace_tokens_of_a_character_model_are_visible_everywhere(digits_onnx):
    at = upload(list(digits_onnx.items()))
    at.text_area(key="text").set_value("1 2").run()
    big = plotly_charts(at)[0].spec
    assert big["data"][0]["x"] == ["0·1", "1·␣", "2·2"]  # axes and hover
    at.segmented_control(key="view").set_value("predict").run()
    assert not at.exception and not at.error
    table = at.dataframe[0].value  # position, token, #1 next, p #1, ...
    assert list(table["token"]) == ["1", "␣", "2"]
    shown = {t for col in table.columns if col.startswith("#") for t in table[col]}
    assert "" not in shown and " " not in shown  # a space comes out as ␣, never blank
    topk = plotly_charts(at)[0].spec
    assert " " not in topk["data"][0]["y"] and "" not in topk["data"][0]["y"]


@pytest.mark.slow
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


def refused_and_still_usable(at: AppTest, *fragments: str) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert at.error, "a refusal message was expected"
    message = at.error[0].value
    assert message.startswith("Not loaded:"), message
    for fragment in fragments:
        assert plain(fragment) in message, message  # escaped: the message quotes file text
    assert at.radio(key="model").value == "softmax"  # the previous model is still in use
    assert "upload" not in at.radio(key="model").options
    assert_usable(at)


def test_nan_weight_checkpoint_is_refused(tmp_path):
    data = checkpoint_bytes(tmp_path, nan_weight="blocks.1.attn.v_proj.weight")
    at = upload([("mine.safetensors", data)])
    refused_and_still_usable(at, "weight blocks.1.attn.v_proj.weight contains NaN or inf")


def test_zip_bomb_is_refused():
    bomb = hostile.zip_bytes({"archive/data.pkl": 16, "archive/data/0": MAX_ZIP_UNCOMPRESSED + 1})
    at = upload([("ckpt.pt", bomb), ("meta.pkl", meta_bytes())])
    refused_and_still_usable(at, "ckpt.pt: refused: it unpacks to more than")


def test_wrong_shape_checkpoint_is_refused():
    sd = nanogpt_state(ARGS)
    sd["transformer.h.1.mlp.c_fc.weight"] = torch.zeros(48, 16)
    at = upload([("ckpt.pt", ckpt_bytes(sd, ARGS, optimizer=False)), ("meta.pkl", meta_bytes())])
    refused_and_still_usable(
        at, "transformer.h.1.mlp.c_fc.weight has shape (48, 16), the config needs (64, 16)"
    )


def test_onnx_with_external_data_is_refused(digits_onnx):
    inspect = onnx.load_from_string(digits_onnx["digits.inspect.onnx"])
    bad = hostile.external_initializer(inspect, "../../etc/passwd").SerializeToString()
    at = upload([("digits.inspect.onnx", bad)])
    refused_and_still_usable(at, "points to an outside file ('../../etc/passwd')")


def test_contract_onnx_uploads_and_shows_its_heads(digits_onnx):
    at = upload(list(digits_onnx.items()))
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.radio(key="model").value == "upload"
    assert at.selectbox(key="head").options == ["0", "1"]  # the uploaded model's 2 heads
    assert at.selectbox(key="layer").options == ["0", "1"]
    at.text_area(key="text").set_value("3.14 + 2 = 5.14").run()
    assert_usable(at)
    for view in ("stats", "predict", "shapes", "positional", "mask"):  # stats: no letters
        at.segmented_control(key="view").set_value(view).run()
        assert not at.exception, (view, [e.value for e in at.exception])
        assert not at.error, (view, [e.value for e in at.error])


def test_onnxruntime_failure_on_an_input_is_reported_not_raised(digits_export, digits_onnx):
    """A graph that passes every check but fails on one character the trial never feeds."""
    model = digits_export[0]
    tried = {
        i for _, feed in trial_inputs("inspect", model.cfg) for i in feed["input_ids"]["values"]
    }
    bad_id = min(set(range(len(DIGITS))) - tried)
    inspect = onnx.load_from_string(digits_onnx["digits.inspect.onnx"])
    bad = hostile_onnx.rewire_output(inspect, "logits", hostile_onnx.fails_on_token(bad_id))
    at = upload([("digits.inspect.onnx", bad.SerializeToString())])
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.radio(key="model").value == "upload"
    at.text_area(key="text").set_value(f"1 {DIGITS[bad_id]} 2").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.error and at.error[0].value.startswith("This model failed on this input: Reshape")
    fine = "".join(DIGITS[i] for i in sorted(tried))  # only ids the trial ran
    at.text_area(key="text").set_value(fine).run()  # the page stays usable
    assert not at.error
    assert_usable(at)


def test_the_uploader_says_how_to_shrink_a_checkpoint_over_its_limit():
    """The uploader refuses a file over 50 MB in the browser, before any code of ours sees
    it (its reason is in a tooltip): the command that shrinks one is on the page, and the
    vocabulary left behind gets a line that names it too, not a riddle about meta.pkl."""
    at = upload([("meta.pkl", meta_bytes())])
    command = "python -m upload.convert ckpt.pt --meta meta.pkl --out converted/"
    assert any(command in c.value and "50 MB" in c.value for c in at.caption)
    refused_and_still_usable(at, "meta.pkl: only a vocabulary", command)


def test_a_vocabulary_of_another_size_is_refused_with_both_numbers():
    args = {**ARGS, "vocab_size": 50304}  # GPT-2's 50,257 tokens padded by nanoGPT
    ckpt = ckpt_bytes(nanogpt_state(args), args, optimizer=False)
    at = upload([("ckpt.pt", ckpt), ("meta.pkl", meta_bytes())])
    refused_and_still_usable(at, "has 30 tokens (largest id 29) but the model has 50,304 token")
