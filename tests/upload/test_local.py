"""The command line's local checkpoints: a nanoGPT ckpt.pt over the browser's limit (its
optimizer state) becomes one upload file the app accepts, and the optimizer state is
never read."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest
import torch

from models.config import ModelConfig
from models.tokenizer import encode
from tests.helpers.nanogpt_layout import (
    LARGE_ARGS,
    ckpt_bytes,
    nanogpt_forward,
    write_checkpoint,
)
from upload.convert import main
from upload.errors import UploadError
from upload.limits import MAX_UPLOAD_BYTES
from upload.load import load_upload
from upload.local import browser_refusal, convert_files, read_local


@pytest.fixture(scope="module")
def large(tmp_path_factory):
    """(state dict, ckpt.pt path, meta.pkl path, what the CLI wrote) of a character model
    whose checkpoint is over 50 MB with its AdamW state."""
    folder = tmp_path_factory.mktemp("large")
    sd, ckpt, meta = write_checkpoint(folder, LARGE_ARGS)
    with contextlib.redirect_stderr(io.StringIO()) as bar:  # tqdm's, as on a terminal
        written = convert_files(
            {"ckpt.pt": ckpt, "meta.pkl": meta}, folder / "converted", progress=True
        )
    return sd, ckpt, meta, written, bar.getvalue()


def weight_bytes(sd: dict) -> int:
    return sum(t.numel() * 4 for k, t in sd.items() if k != "lm_head.weight")  # tied


def test_the_browser_refuses_the_checkpoint_and_names_the_command(large):
    sd, ckpt, meta, _, _ = large
    assert ckpt.stat().st_size > MAX_UPLOAD_BYTES > weight_bytes(sd)
    with pytest.raises(UploadError) as refused:
        load_upload({"ckpt.pt": ckpt.read_bytes(), "meta.pkl": meta.read_bytes()})
    assert str(refused.value).startswith("ckpt.pt: too large")
    assert str(refused.value).endswith(
        "python -m upload.convert ckpt.pt --meta meta.pkl --out converted/, then upload "
        "converted/ckpt.safetensors"
    )


def test_the_cli_does_not_read_the_optimizer_state(large, tmp_path):
    """The worker's peak memory while it reads the 58.6 MB checkpoint grows as much as for
    the same weights saved without AdamW's two moments (39 MB of the file): they stay
    unread pages of the memory-mapped file. torch.load without mmap would hold them."""
    sd, ckpt, meta, written, _ = large
    full = written.read
    bare = tmp_path / "ckpt.pt"
    bare.write_bytes(ckpt_bytes(sd, LARGE_ARGS, optimizer=False))
    weights_only = read_local({"ckpt.pt": bare, "meta.pkl": meta})
    optimizer = full.file_bytes - weights_only.file_bytes
    assert full.file_bytes == ckpt.stat().st_size and optimizer > 1.9 * weight_bytes(sd)
    growth = full.peak_bytes - full.rss_bytes
    growth_without = weights_only.peak_bytes - weights_only.rss_bytes
    assert weight_bytes(sd) <= growth < full.file_bytes  # the weights were read, once
    assert growth - growth_without < optimizer / 4, (growth, growth_without)


@pytest.mark.slow
def test_the_converted_file_uploads_and_matches_nanogpt(large):
    sd, _, _, written, bar = large
    assert written.path.name == "ckpt.safetensors" and written.graphs == []
    stages = ("reading in an isolated worker: 0/3", "converting: 1/3", "writing: 2/3", "done: 3/3")
    assert all(stage in bar for stage in stages), bar  # the progress bar's stages
    assert written.path.stat().st_size < MAX_UPLOAD_BYTES and written.browser_refusal == ""
    model = load_upload({"ckpt.safetensors": written.path.read_bytes()})
    try:
        ids = encode(model.tokenizer, "ROMEO:\nO speak, hear me.").ids
        want = nanogpt_forward(sd, LARGE_ARGS, torch.tensor([ids]))  # (1, T, V)
        assert np.abs(model.inspect(ids)["logits"] - want.numpy()).max() <= 1e-5
        assert model.card.training["iter_num"] == 250
        assert model.card.notes[0].startswith("Trained with nanoGPT (ckpt.pt): saved at")
    finally:
        model.close() if hasattr(model, "close") else None


def test_a_model_the_browser_would_refuse_is_said_so(tmp_path):
    path = tmp_path / "big.safetensors"
    path.write_bytes(b"x")
    wide = ModelConfig(vocab_size=50304, n_layer=12, n_head=12, d_model=768, context_length=1024)
    assert "parameters" in browser_refusal(path, wide)  # GPT-2 small: 124M parameters
    long = ModelConfig(vocab_size=65, n_layer=12, n_head=12, d_model=48, context_length=1024)
    assert "float32 values" in browser_refusal(path, long)  # its attention at T = 1024
    assert browser_refusal(path, ModelConfig(vocab_size=65, n_layer=1, n_head=1, d_model=8)) == ""


@pytest.mark.slow
def test_cli_refuses_a_checkpoint_without_its_vocabulary_in_one_line(large, capsys):
    _, ckpt, _, _, _ = large
    with pytest.raises(SystemExit) as exit_code:
        main([str(ckpt), "--out", str(ckpt.parent / "none")])
    assert exit_code.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("refused: ckpt.pt: a nanoGPT checkpoint")
    assert f"({LARGE_ARGS['vocab_size']:,} token rows here)" in err
    assert err.endswith("(--meta meta.pkl or --tokenizer tokenizer.json)")
    assert not (ckpt.parent / "none").exists()
