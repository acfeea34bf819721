"""Hugging Face folders through the command line, compared with ``transformers`` itself.

Random-weight ``GPT2LMHeadModel``s (tied and untied, ``model.safetensors`` and
``pytorch_model.bin``) are saved as folders, converted by ``python -m upload.convert DIR
--out OUT --onnx`` (the isolated worker reads the folder; our exporter writes the
graphs), and our ONNX graphs' logits and attention are compared with the outputs of
``transformers`` (eager attention, ``output_attentions=True``): logits within 1e-4 of
the largest logit, attention within 1e-5.
"""

from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import onnx
import pytest
import torch

from inference.runtime import load_graphs
from tests.helpers.gpt2_folder import VOCAB, gpt2_model, save_folder
from upload.convert import main
from upload.errors import UploadError
from upload.folder_layout import folder_files
from upload.folders import read_folder
from upload.formats.hf_gpt2 import gpt2_config
from upload.limits import local_file_limits
from upload.load import load_upload

LOGITS_RTOL, ATTN_ATOL = 1e-4, 1e-5
IDS = torch.randint(0, VOCAB, (1, 32), generator=torch.Generator().manual_seed(3))  # T = context


def reference(model, ids=IDS):
    """transformers' own logits (T, V) and attention (L, H, T, T) of ``ids`` (1, T)."""
    with torch.no_grad():
        out = model(ids, output_attentions=True)
    return out.logits[0].numpy(), torch.stack([a[0] for a in out.attentions]).numpy()


def assert_matches(logits, attn, model, ids=IDS):
    want_logits, want_attn = reference(model, ids)
    assert np.abs(logits - want_logits).max() <= LOGITS_RTOL * np.abs(want_logits).max()
    assert np.abs(attn - want_attn).max() <= ATTN_ATOL
    assert np.abs(want_attn - 1 / ids.shape[1]).max() > 0.1  # attention is far from uniform


def _convert(tmp_path_factory, tie: bool, weights: str):
    """(transformers model, folder, out folder, what the command printed) of a folder
    converted by the command line with --onnx."""
    model = gpt2_model(tie=tie, seed=int(tie))
    folder = save_folder(model, tmp_path_factory.mktemp("hf") / "tiny-gpt2", weights)
    out = folder.parent / "out"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        main([str(folder), "--out", str(out), "--onnx"])
    return model, folder, out, printed.getvalue()


@pytest.fixture(scope="module")
def tied_safetensors(tmp_path_factory):
    return _convert(tmp_path_factory, True, "model.safetensors")


@pytest.fixture(scope="module")
def untied_bin(tmp_path_factory):
    return _convert(tmp_path_factory, False, "pytorch_model.bin")


@pytest.fixture(params=["tied_safetensors", "untied_bin"])
def converted(request):
    return request.getfixturevalue(request.param)


@pytest.mark.slow
def test_cli_graphs_match_transformers(converted):
    model, folder, out, _ = converted
    names = sorted(p.name for p in out.iterdir())
    assert names == [
        "tiny-gpt2.fast.onnx", "tiny-gpt2.inspect.onnx", "tiny-gpt2.lab.onnx", "tiny-gpt2.safetensors"
    ]  # fmt: skip
    ours = load_graphs(out / "tiny-gpt2.inspect.onnx", out / "tiny-gpt2.fast.onnx")
    cfg = ours.config
    assert (cfg.activation, cfg.ln_eps, cfg.position_scheme) == ("gelu_new", 1e-5, "learned")
    assert cfg.tie_weights == model.config.tie_word_embeddings
    assert (cfg.n_layer, cfg.n_head, cfg.d_model, cfg.context_length) == (2, 2, 16, 32)
    outputs = ours.inspect(IDS[0].tolist())
    assert_matches(outputs["logits"][0], outputs["attn"], model)
    assert np.allclose(ours.logits(IDS[0].tolist()), outputs["logits"][0], atol=1e-5)
    meta = {p.key: p.value for p in onnx.load(str(out / "tiny-gpt2.fast.onnx")).metadata_props}
    assert json.loads(meta["config"])["activation"] == "gelu_new"  # the contract carries it


@pytest.mark.slow
def test_cli_says_the_browser_accepts_a_small_folder(tied_safetensors):
    printed = tied_safetensors[3]
    assert "in the app (Inspect your own model)" in printed and "peak memory" in printed
    assert "tiny-gpt2.safetensors (0.1 MB, 11,904 parameters)" in printed, printed


@pytest.mark.slow
def test_the_upload_file_goes_through_the_browser_path(tied_safetensors):
    """The converted .safetensors, uploaded as a student would: read in the worker (our
    format, GPT-2's BPE tokenizer rebuilt by our code), exported, equal to transformers."""
    model, _, out, _ = tied_safetensors
    uploaded = load_upload({"tiny-gpt2.safetensors": (out / "tiny-gpt2.safetensors").read_bytes()})
    assert uploaded.card.config["activation"] == "gelu_new"
    outputs = uploaded.inspect(IDS[0].tolist())
    assert_matches(outputs["logits"][0], outputs["attn"], model)
    text = "the cat sat on the mat."
    assert uploaded.tokenizer.decode(uploaded.tokenizer.encode(text).ids) == text


@pytest.mark.slow
@pytest.mark.parametrize(
    "tie, weights, prefix",
    [
        (True, "pytorch_model.bin", True),
        (False, "model.safetensors", True),
        (True, "model.safetensors", False),  # GPT2Model's names, with its mask buffers
    ],
)
def test_worker_reading_matches_transformers(tmp_path, tie, weights, prefix):
    """The other layouts, read by the worker and built in PyTorch (no export)."""
    from models.checkpoint import build_model

    model = gpt2_model(tie=tie, seed=7)
    folder = save_folder(model, tmp_path / "g", weights, prefix=prefix)
    read = read_folder(folder).converted
    ours = build_model(read.cfg, {k: torch.from_numpy(v) for k, v in read.weights.items()}, "g")
    assert ("lm_head.weight" in read.weights) == (not tie)
    with torch.no_grad():
        logits, cache = ours(IDS, inspect=True)
    assert_matches(logits[0].numpy(), cache["attn"].numpy(), model)


@pytest.mark.slow
def test_exact_gelu_is_read_as_such_and_the_activation_matters(tmp_path):
    """activation_function "gelu" (exact) converts to ours; the same weights with GELU-new
    differ from transformers by more than the tolerance, so the test above can fail."""
    from dataclasses import replace

    from models.checkpoint import build_model

    model = gpt2_model(seed=5, activation_function="gelu")
    read = read_folder(save_folder(model, tmp_path / "g")).converted
    assert read.cfg.activation == "gelu"
    state = {k: torch.from_numpy(v) for k, v in read.weights.items()}
    with torch.no_grad():
        right, cache = build_model(read.cfg, state, "g")(IDS, inspect=True)
        wrong = build_model(replace(read.cfg, activation="gelu_new"), state, "g")(IDS)
    assert_matches(right[0].numpy(), cache["attn"].numpy(), model)
    want = reference(model)[0]
    assert np.abs(wrong[0].numpy() - want).max() > LOGITS_RTOL * np.abs(want).max()


# --- bad folders: one line each ----------------------------------------------------------


@pytest.fixture(scope="module")
def good_folder(tmp_path_factory):
    return save_folder(gpt2_model(), tmp_path_factory.mktemp("good") / "gpt2")


@pytest.mark.slow
def test_without_onnx_only_the_upload_file_is_written(tmp_path, good_folder, capsys):
    """As for every input kind of the command line, graphs only with --onnx."""
    main([str(good_folder), "--out", str(tmp_path / "out")])
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["gpt2.safetensors"]
    assert ".onnx" not in capsys.readouterr().out


def refused_line(capsys, argv) -> str:
    capsys.readouterr()  # what building the folder printed
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err  # one line, no traceback
    return lines[0]


@pytest.mark.parametrize(
    "remove, named",
    [
        (["config.json"], "missing config.json"),
        (["model.safetensors"], "missing model.safetensors or pytorch_model.bin"),
        (["tokenizer.json"], "missing tokenizer.json"),
        (["config.json", "tokenizer.json"], "missing config.json and tokenizer.json"),
    ],
)
def test_a_folder_missing_a_file_is_one_line(tmp_path, good_folder, capsys, remove, named):
    folder = tmp_path / "gpt2"
    folder.mkdir()
    for path in good_folder.iterdir():
        if path.name not in remove:
            (folder / path.name).write_bytes(path.read_bytes())
    line = refused_line(capsys, [str(folder), "--out", str(tmp_path / "out")])
    assert line.startswith("refused: gpt2/: ") and named in line
    assert "a Hugging Face folder needs config.json, model.safetensors" in line
    assert not (tmp_path / "out").exists()  # nothing written


def test_sharded_weights_are_named(tmp_path):
    (tmp_path / "model.safetensors.index.json").write_text("{}")
    with pytest.raises(UploadError, match="sharded weights are not read"):
        folder_files(tmp_path)


CONFIG_REFUSALS = [
    ({"activation_function": "relu"}, "activation_function 'relu' is not supported"),
    ({"n_layer": "2"}, "'n_layer' must be a positive integer, got '2'"),
    ({"layer_norm_epsilon": 2}, "layer_norm_epsilon must be a number in (0, 1), got 2"),
    ({"n_inner": -1}, "'n_inner' must be a positive integer or null"),
    ({"scale_attn_by_inverse_layer_idx": True}, "'scale_attn_by_inverse_layer_idx' is true"),
    ({"reorder_and_upcast_attn": True}, "'reorder_and_upcast_attn' is true"),
    ({"scale_attn_weights": False}, "'scale_attn_weights' is false"),
    ({"model_type": "llama"}, "model_type 'llama'"),
    ({"n_head": 0}, "'n_head' must be a positive integer"),
    ({"n_head": 3}, "n_embd=16 is not divisible by n_head=3"),
]


@pytest.mark.parametrize("change, message", CONFIG_REFUSALS)
def test_a_refused_config_names_the_file_and_the_field(good_folder, change, message):
    """The worker's reading of config.json (``gpt2_config``), called here directly: one
    case per refusal. The command line's path to it is the next test's."""
    config = json.loads((good_folder / "config.json").read_text())
    with pytest.raises(UploadError) as refusal:
        gpt2_config({**config, **change}, "gpt2/config.json", local_file_limits(10**6))
    line = str(refusal.value)
    assert line.startswith("gpt2/config.json") and message in line and "\n" not in line, line


@pytest.mark.parametrize(
    "change, message",
    [
        CONFIG_REFUSALS[0],
        (
            {"vocab_size": 301},
            "the tokenizer has 300 tokens (largest id 299) but the model has 301",
        ),
    ],
)
def test_a_refused_config_is_one_line_naming_the_file(
    tmp_path, good_folder, capsys, change, message
):
    folder = tmp_path / "gpt2"
    folder.mkdir()
    for path in good_folder.iterdir():
        (folder / path.name).write_bytes(path.read_bytes())
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, **change}))
    line = refused_line(capsys, [str(folder), "--out", str(tmp_path / "out")])
    assert line.startswith("refused: gpt2/config.json") or line.startswith(
        "refused: gpt2/tokenizer.json"
    ), line
    assert message in line, line


def test_weights_that_do_not_fit_name_gpt2s_key(tmp_path, capsys):
    model = gpt2_model()
    folder = save_folder(model, tmp_path / "gpt2", "pytorch_model.bin")
    state = torch.load(folder / "pytorch_model.bin", weights_only=True)
    del state["transformer.h.1.mlp.c_fc.bias"]
    state["transformer.h.0.attn.c_attn.weight"] = torch.zeros(16, 47)
    torch.save(state, folder / "pytorch_model.bin")
    line = refused_line(capsys, [str(folder), "--out", str(tmp_path / "out")])
    assert "gpt2/pytorch_model.bin: h.0.attn.c_attn.weight has shape (16, 47)" in line, line


@pytest.mark.slow
def test_attention_at_a_realistic_size_within_float32_of_the_scores(tmp_path):
    """#20 item 16: at 4 layers x 4 heads x d_model 128 over 128 tokens (the tests'
    weight recipe) an absolute 1e-5 on attention does not hold (5.3e-5 measured): a
    softmax weight moves by at most a quarter of its score's error, and float32 scores
    near |s| carry errors of a few ulps of |s|. So: within 2e-6 x max(1, max |score|)
    of transformers' own attention, the scores recomputed from its hidden states."""
    model = gpt2_model(seed=5, n_layer=4, n_head=4, n_embd=128, n_positions=128)
    folder = save_folder(model, tmp_path / "gpt2-4x4x128")
    out = tmp_path / "out"
    with contextlib.redirect_stdout(io.StringIO()):
        main([str(folder), "--out", str(out), "--onnx"])
    ours = load_graphs(out / "gpt2-4x4x128.inspect.onnx")
    ids = torch.randint(0, VOCAB, (1, 128), generator=torch.Generator().manual_seed(7))
    got = ours.inspect(ids[0].tolist())["attn"]  # (L, H, T, T)
    with torch.no_grad():
        run = model(ids, output_attentions=True, output_hidden_states=True)
        want = torch.stack([a[0] for a in run.attentions]).numpy()  # (L, H, T, T)
        biggest = 0.0
        for layer, block in enumerate(model.transformer.h):
            q, k, _ = block.attn.c_attn(block.ln_1(run.hidden_states[layer])).split(128, dim=-1)
            q, k = (x.view(1, 128, 4, 32).transpose(1, 2) for x in (q, k))  # (1, H, T, d_head)
            scores = q @ k.transpose(-1, -2) / 32**0.5  # (1, H, T, T)
            biggest = max(biggest, float(scores.tril().abs().max()))
    err = float(np.abs(got - want).max())
    # measured 4.4e-5 against a largest score of 67.5: 0.64e-6 of it; 2e-6 is 16 float32
    # ulps of the largest score, room for another CPU's summation order
    assert err <= 2e-6 * max(1.0, biggest), (err, biggest)
    assert np.abs(want - 1 / 128).max() > 0.1  # attention far from uniform
