"""Hugging Face files the uploader does not take as they are (#44 item 22): each refusal
says what the file is and the one command that works, instead of sending the user the
wrong way. Real folders written by ``save_pretrained``; the command line and the
uploader's own path (``load_upload``, its worker)."""

from __future__ import annotations

import pytest

from tests.helpers.hf_exports import hf_gpt2, small_causal_lm, tokenizer_json
from tests.upload.test_folders import refused_line
from upload.hf_advice import CONVERTED
from upload.load import load_upload

pytestmark = pytest.mark.slow  # transformers, save_pretrained and the worker: 4-8 s a test
ONNX_COMMAND = "python -m upload.convert model.onnx --tokenizer"
FOLDER_COMMAND = "python -m upload.convert path/to/folder --out converted/"


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """Random Llama, OPT and GPT-2 folders, as save_pretrained writes them."""
    import transformers as tf

    opt = tf.OPTConfig(vocab_size=300, hidden_size=16, num_hidden_layers=1, ffn_dim=32,
                       num_attention_heads=2, max_position_embeddings=64, word_embed_proj_dim=16)  # fmt: skip
    root = tmp_path_factory.mktemp("hf")
    models = (("llama", small_causal_lm("llama")),
              ("opt", tf.OPTForCausalLM(opt)), ("gpt2", hf_gpt2()))  # fmt: skip
    for name, model in models:
        model.save_pretrained(root / name)
        (root / name / "tokenizer.json").write_bytes(tokenizer_json())
    return root


def test_an_opt_folder_is_sent_to_onnx(folders, capsys, tmp_path):
    """Was: "is not a GPT-2-family model; this converter reads GPT2LMHeadModel folders"."""
    line = refused_line(capsys, [str(folders / "opt"), "--out", str(tmp_path / "out")])
    assert "a Hugging Face OPTForCausalLM model (model_type 'opt')" in line, line
    assert f"upload.convert converts {CONVERTED} folders" in line
    assert line.endswith(f"{ONNX_COMMAND} opt/tokenizer.json"), line


def test_a_lone_model_safetensors_says_what_it_is(folders, capsys, tmp_path):
    """Was: "its metadata needs 'config' and 'tokenizer'; save it with training.train";
    with --tokenizer beside it: "upload one model at a time"."""
    out = ["--out", str(tmp_path / "out")]
    opt = folders / "opt" / "model.safetensors"
    for argv in ([str(opt), *out], [str(opt), "--tokenizer", str(opt.with_name("tokenizer.json")), *out]):  # fmt: skip
        line = refused_line(capsys, argv)
        assert "model.safetensors: the weights of a Hugging Face model" in line, line
        assert "training.train" not in line and "one model at a time" not in line, line
        assert f"It is not {CONVERTED}: export it to ONNX" in line
        assert ONNX_COMMAND in line
    for name, prefix in (("gpt2", "transformer."), ("llama", "model.")):
        line = refused_line(capsys, [str(folders / name / "model.safetensors"), *out])
        assert f"the weights of a Hugging Face model (tensors such as '{prefix}" in line
        assert line.endswith(
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
    model = {"model.safetensors": (folders / "opt" / "model.safetensors").read_bytes()}
    with pytest.raises(
        ValueError, match="the weights of a Hugging Face model .* export it to ONNX"
    ):
        load_upload(model)
