"""nanoGPT checkpoints with GPT-2's vocabulary: loaded with the tokenizer.json the user
supplies (built here: nothing is downloaded), padded rows (50,304 for 50,257 ids) noted,
and every vocabulary that does not fit the checkpoint refused in one line with both
numbers."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from models.checkpoint import load_checkpoint
from models.tokenizer import encode, tokenizer_kind
from tests.helpers.gpt2_tokenizer import gpt2_style_tokenizer
from tests.helpers.nanogpt_layout import (
    ARGS,
    SHAKESPEARE_CHARS,
    ckpt_bytes,
    meta_bytes,
    meta_of,
    nanogpt_forward,
    nanogpt_state,
)
from upload.convert import main
from upload.errors import UploadError
from upload.formats.ours import read_ours
from upload.load import load_upload

TOKENIZER = gpt2_style_tokenizer(50257).encode()  # GPT-2's 50,257 ids (338 trained here)
TEXT = "ROMEO:\nO speak, the cat sat on the mat. <|endoftext|>"


def gpt2_checkpoint(vocab_size: int, seed: int = 3) -> tuple[dict, dict, bytes]:
    """(state dict, model_args, ckpt.pt bytes with AdamW state) of a tiny nanoGPT model
    with ``vocab_size`` token rows."""
    args = dict(ARGS, vocab_size=vocab_size, block_size=32)
    sd = nanogpt_state(args, seed=seed)
    return sd, args, ckpt_bytes(sd, args)


@pytest.fixture(scope="module")
def padded():
    return gpt2_checkpoint(50304)  # nanoGPT rounds GPT-2's 50,257 up to a multiple of 64


@pytest.mark.slow
def test_a_padded_gpt2_vocabulary_uploads_and_matches_nanogpt(padded):
    sd, args, ckpt = padded
    model = load_upload({"ckpt.pt": ckpt, "tokenizer.json": TOKENIZER})
    assert tokenizer_kind(model.tokenizer) == "bpe" and model.config.vocab_size == 50304
    enc = encode(model.tokenizer, TEXT)
    assert enc.tokens[5:8] == [":", "\n", "O"] and enc.ids[-1] == 50256  # <|endoftext|>
    want = nanogpt_forward(sd, args, torch.tensor([enc.ids]))  # (1, T, 50304)
    out = model.inspect(enc.ids)
    assert out["logits"].shape == (1, len(enc.ids), 50304)
    assert np.abs(out["logits"] - want.numpy()).max() <= 1e-5
    assert model.card.source == "nanoGPT checkpoint"
    assert (
        "The model has 50,304 token rows for the tokenizer's 50,257 ids: the last 47 are "
        "padding" in model.card.notes[-1]
    )


def test_an_unpadded_gpt2_vocabulary_through_the_cli(tmp_path, capsys):
    sd, args, ckpt = gpt2_checkpoint(50257, seed=4)
    (tmp_path / "ckpt.pt").write_bytes(ckpt)
    (tmp_path / "tokenizer.json").write_bytes(TOKENIZER)
    out = tmp_path / "converted"
    main([str(tmp_path / "ckpt.pt"), "--tokenizer", str(tmp_path / "tokenizer.json")]
         + ["--out", str(out)])  # fmt: skip
    printed = capsys.readouterr().out
    assert f"wrote {out / 'ckpt.safetensors'}" in printed and "padding" not in printed
    assert f"upload {out / 'ckpt.safetensors'} in the app" in printed
    model, tokenizer, _ = load_checkpoint(out / "ckpt.safetensors")
    ids = encode(tokenizer, TEXT).ids
    with torch.no_grad():
        got = model(torch.tensor([ids]))  # (1, T, 50257)
    assert (got - nanogpt_forward(sd, args, torch.tensor([ids]))).abs().max() <= 1e-5
    data = (out / "ckpt.safetensors").read_bytes()
    _, spec, training = read_ours(data, "ckpt.safetensors")  # as the uploader reads it
    assert spec["kind"] == "bpe" and len(spec["vocab"]) == 338
    assert training["converted_from"] == "ckpt.pt" and training["iter_num"] == 250


def one_line_refusal(files: dict[str, bytes]) -> str:
    """The app's one line for ``files`` (read in the upload worker)."""
    with pytest.raises(UploadError) as refused:
        load_upload(files)
    message = str(refused.value)
    assert "\n" not in message
    return message


def test_a_checkpoint_without_its_vocabulary_names_both_files(padded):
    assert one_line_refusal({"ckpt.pt": padded[2]}) == (
        "ckpt.pt: a nanoGPT checkpoint needs its vocabulary (50,304 token rows here): "
        "upload meta.pkl (character models) or GPT-2's tokenizer.json (models with GPT-2's "
        "50,257-token vocabulary); nothing is downloaded"
    )


def test_a_character_vocabulary_for_gpt2_rows_is_refused_with_both_numbers(padded):
    message = one_line_refusal({"ckpt.pt": padded[2], "meta.pkl": meta_of(SHAKESPEARE_CHARS)})
    assert message.startswith(
        "ckpt.pt + meta.pkl: the tokenizer has 65 tokens (largest id 64) but the model has "
        "50,304 token rows (embedding and output): they do not belong together"
    )


def test_a_tokenizer_larger_than_the_rows_is_refused_with_both_numbers():
    _, _, ckpt = gpt2_checkpoint(300)
    message = one_line_refusal({"ckpt.pt": ckpt, "tokenizer.json": TOKENIZER})
    assert message.startswith(
        "ckpt.pt + tokenizer.json: the tokenizer has 338 tokens (largest id 50,256) but the "
        "model has 300 token rows"
    )


def test_two_vocabularies_or_a_vocabulary_alone_are_refused(padded):
    both = {"ckpt.pt": padded[2], "meta.pkl": meta_bytes(), "tokenizer.json": TOKENIZER}
    assert one_line_refusal(both) == (
        "ckpt.pt: upload one vocabulary with it, not meta.pkl and tokenizer.json"
    )
    alone = one_line_refusal({"tokenizer.json": TOKENIZER})
    assert alone.startswith("tokenizer.json: only a vocabulary; upload it together with its")
    assert alone.endswith(
        "python -m upload.convert ckpt.pt --tokenizer tokenizer.json --out converted/, then "
        "upload converted/ckpt.safetensors"
    )


@pytest.mark.slow
def test_the_cli_converts_a_model_beyond_the_uploads_limits_and_says_so(tmp_path, capsys):
    """GPT-2's vocabulary at a context of 2,048: its logits alone are 103M float32 values
    per sentence, more than an upload may ask for; the command line converts it anyway."""
    args = dict(ARGS, vocab_size=50304, block_size=2048)
    (tmp_path / "ckpt.pt").write_bytes(ckpt_bytes(nanogpt_state(args, seed=6), args))
    (tmp_path / "tokenizer.json").write_bytes(TOKENIZER)
    with pytest.raises(UploadError, match="would hold 136,937,472 float32 values"):
        load_upload({"ckpt.pt": (tmp_path / "ckpt.pt").read_bytes(), "tokenizer.json": TOKENIZER})
    main([str(tmp_path / "ckpt.pt"), "--tokenizer", str(tmp_path / "tokenizer.json")]
         + ["--out", str(tmp_path / "converted")])  # fmt: skip
    printed = capsys.readouterr().out
    assert (tmp_path / "converted" / "ckpt.safetensors").exists()
    assert "note: the app's uploader would refuse ckpt.safetensors (at its full context" in printed
    assert "whoever runs the app's server can serve it to every session instead" in printed
    fits = int(printed.split("the longest context that fits is ")[1].split()[0])
    main([str(tmp_path / "ckpt.pt"), "--tokenizer", str(tmp_path / "tokenizer.json"),
          "--context", str(fits), "--out", str(tmp_path / "short")])  # fmt: skip
    printed = capsys.readouterr().out
    assert f"upload {tmp_path / 'short' / 'ckpt.safetensors'} in the app" in printed, printed
    assert f"note: Context shortened from 2,048 to {fits:,} tokens" in printed
