"""Hugging Face files the uploader does not take as they are (#44 item 22): each refusal
says what the file is and the one command that works, instead of sending the user the
wrong way. Real folders written by ``save_pretrained``; the command line and the
uploader's own path (``load_upload``, its worker)."""

from __future__ import annotations

import pytest

from tests.helpers.hf_exports import hf_gpt2, small_causal_lm, tokenizer_json
from tests.upload.test_folders import refused_line
from upload.load import load_upload

pytestmark = pytest.mark.slow  # transformers, save_pretrained and the worker: 4-8 s a test
ONNX_COMMAND = "python -m upload.convert model.onnx --tokenizer"
FOLDER_COMMAND = "python -m upload.convert path/to/folder --out converted/"


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """A random Llama's and a random GPT-2's folders, as save_pretrained writes them."""
    root = tmp_path_factory.mktemp("hf")
    for name, model in (("llama", small_causal_lm("llama")), ("gpt2", hf_gpt2())):
        model.save_pretrained(root / name)
        (root / name / "tokenizer.json").write_bytes(tokenizer_json())
    return root


def test_a_llama_folder_is_sent_to_onnx(folders, capsys, tmp_path):
    """Was: "is not a GPT-2-family model; this converter reads GPT2LMHeadModel folders"."""
    line = refused_line(capsys, [str(folders / "llama"), "--out", str(tmp_path / "out")])
    assert "a Hugging Face LlamaForCausalLM model (model_type 'llama')" in line, line
    assert line.endswith(f"{ONNX_COMMAND} llama/tokenizer.json"), line


def test_a_lone_model_safetensors_says_what_it_is(folders, capsys, tmp_path):
    """Was: "its metadata needs 'config' and 'tokenizer'; save it with training.train";
    with --tokenizer beside it: "upload one model at a time"."""
    out = ["--out", str(tmp_path / "out")]
    llama = folders / "llama" / "model.safetensors"
    for argv in ([str(llama), *out], [str(llama), "--tokenizer", str(llama.with_name("tokenizer.json")), *out]):  # fmt: skip
        line = refused_line(capsys, argv)
        assert "model.safetensors: the weights of a Hugging Face model" in line, line
        assert "training.train" not in line and "one model at a time" not in line, line
        assert "It is not GPT-2-family: export it to ONNX" in line and ONNX_COMMAND in line
    gpt2 = refused_line(capsys, [str(folders / "gpt2" / "model.safetensors"), *out])
    assert "the weights of a Hugging Face model (tensors such as 'transformer." in gpt2
    assert gpt2.endswith(
        f"Convert its folder, with config.json and tokenizer.json beside it: {FOLDER_COMMAND}"
    )


def test_an_upload_of_config_and_tokenizer_is_sent_to_the_folder_command(folders):
    """Was: "... shrink it with python -m upload.convert ckpt.pt --tokenizer config.json"."""
    files = {n: (folders / "llama" / n).read_bytes() for n in ("config.json", "tokenizer.json")}
    with pytest.raises(ValueError) as refusal:
        load_upload(files)
    line = str(refusal.value)
    assert line.startswith("config.json and tokenizer.json: a Hugging Face model's config")
    assert FOLDER_COMMAND in line and "--tokenizer config.json" not in line, line
    model = {"model.safetensors": (folders / "llama" / "model.safetensors").read_bytes()}
    with pytest.raises(
        ValueError, match="the weights of a Hugging Face model .* export it to ONNX"
    ):
        load_upload(model)
