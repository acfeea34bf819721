"""Uploads: nanoGPT conversion against a reference forward pass, and hostile files refused.

Every file here is real (made with torch.save, pickle, safetensors, onnx, zipfile);
nothing is mocked.
"""

from __future__ import annotations

import io
import json
import pickle
import zipfile

import numpy as np
import onnx
import pytest
import torch
from safetensors.torch import save

from models import contract
from models.checkpoint import load_checkpoint, save_checkpoint
from models.config import ModelConfig
from models.tokenizer import build_tokenizer, char_tokenizer, decode, encode
from models.transformer import Transformer
from tests.helpers import hostile
from tests.helpers.nanogpt_layout import (  # noqa: E402
    ARGS,
    ITOS,
    STOI,
    V,
    ckpt_bytes,
    meta_bytes,
    nanogpt_forward,
    nanogpt_state,
)
from upload.convert import main
from upload.errors import UploadError
from upload.formats.nanogpt import convert_nanogpt, load_meta_pkl
from upload.formats.ours import read_ours
from upload.intake import sniff_format
from upload.limits import MAX_UPLOAD_BYTES, MAX_ZIP_MEMBERS, MAX_ZIP_UNCOMPRESSED
from upload.load import load_upload
from upload.onnx_checks import validate_onnx
from upload.spec_checks import check_spec
from upload.tokenizer_spec import build


def refused(match: str):
    return pytest.raises(ValueError, match=match)


@pytest.fixture(scope="module")
def nanogpt():
    """(state dict, ckpt.pt bytes, meta.pkl bytes) of a small random nanoGPT model."""
    sd = nanogpt_state(ARGS)
    return sd, ckpt_bytes(sd, ARGS), meta_bytes()


@pytest.fixture(scope="module")
def cli_out(tmp_path_factory, nanogpt):
    """Run ``python -m upload.convert ckpt.pt --meta meta.pkl --out DIR --onnx`` in-process."""
    folder = tmp_path_factory.mktemp("cli")
    (folder / "ckpt.pt").write_bytes(nanogpt[1])
    (folder / "meta.pkl").write_bytes(nanogpt[2])
    out = folder / "out"
    main([str(folder / "ckpt.pt"), "--meta", str(folder / "meta.pkl"), "--out", str(out), "--onnx"])
    return out


@pytest.fixture(scope="module")
def inspect_onnx(cli_out) -> onnx.ModelProto:
    return onnx.load(str(cli_out / "ckpt.inspect.onnx"))


@pytest.fixture(scope="module")
def ours(tmp_path_factory):
    """(model, tokenizer, .safetensors bytes) of a tiny linear-attention model of ours."""
    tokenizer = build_tokenizer(["the cat sat on the mat .", "the dogs are in the park ."])
    torch.manual_seed(0)
    cfg = ModelConfig(
        vocab_size=tokenizer.get_vocab_size(), n_layer=1, n_head=2, d_model=16, d_mlp=32,
        context_length=16, attention="linear",
    )  # fmt: skip
    model = Transformer(cfg).eval()
    path = tmp_path_factory.mktemp("ours") / "tiny.safetensors"
    save_checkpoint(path, model, tokenizer)
    return model, tokenizer, path.read_bytes()


# --- nanoGPT conversion -------------------------------------------------------------


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("prefix", ["", "_orig_mod."])
def test_nanogpt_matches_reference_forward(bias, prefix):
    args = {**ARGS, "bias": bias}
    sd = nanogpt_state(args, seed=1, mask_buffer=not bias)
    model, _, _ = convert_nanogpt(ckpt_bytes(sd, args, prefix, optimizer=bias), meta_bytes())
    assert model.cfg.tie_weights and model.cfg.vocab_size == V  # no row added for [UNK]
    assert (model.cfg.bias, model.cfg.ln_bias, model.cfg.position_scheme) == (bias, bias, "learned")
    idx = torch.randint(0, V, (3, 16), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        got = model(idx)  # (3, T, V)
    want = nanogpt_forward(sd, args, idx)  # (3, T, V)
    assert (got - want).abs().max().item() <= 1e-5


def test_untied_head_and_padded_vocabulary():
    args = {**ARGS, "vocab_size": 64}  # padded to a multiple of 64, as nanoGPT does
    sd = nanogpt_state(args, seed=2)
    sd["lm_head.weight"] = sd["lm_head.weight"] + 0.1
    model, _, _ = convert_nanogpt(ckpt_bytes(sd, args, optimizer=False), meta_bytes())
    assert not model.cfg.tie_weights and model.cfg.vocab_size == 64
    idx = torch.arange(16)[None] % V  # (1, 16)
    with torch.no_grad():
        assert torch.allclose(model(idx), nanogpt_forward(sd, args, idx), atol=1e-5)


@pytest.mark.slow
def test_nanogpt_upload_exports_and_onnx_matches(nanogpt):
    sd, ckpt, meta = nanogpt
    calls = []
    onnx_model = load_upload({"ckpt.pt": ckpt, "meta.pkl": meta}, lambda f, m: calls.append(f))
    assert onnx_model.name == "upload: ckpt.pt"
    assert calls[0] == 0.0 and calls[-1] == 1.0 and calls == sorted(calls)
    card = onnx_model.card  # the shipped models' schema: models.card.ModelCard
    cfg = card.config
    assert (cfg["n_layer"], cfg["n_head"], cfg["d_model"], cfg["d_head"]) == (2, 2, 16, 8)
    assert cfg["attention"] == "softmax" and cfg["position_scheme"] == "learned"
    assert card.source == "nanoGPT checkpoint" and card.checkpoint == "ckpt.pt"
    assert card.parameters > 0 and card.probes is None
    assert card.training["iter_num"] == 250 and card.training["best_val_loss"] == 1.47
    assert card.training["nanogpt_config"]["dataset"] == "shakespeare_char"
    assert card.notes == [
        "Trained with nanoGPT (ckpt.pt): saved at iteration 250, best validation loss "
        "1.4700, dataset shakespeare_char."
    ]
    ids = encode(onnx_model.tokenizer, "Speak, hear me.").ids
    out = onnx_model.inspect(ids)
    assert set(out) == set(contract.inspect_outputs("softmax"))
    want = nanogpt_forward(sd, ARGS, torch.tensor([ids]))  # (1, T, V)
    assert np.abs(out["logits"] - want.numpy()).max() <= 1e-5
    assert out["attn"].shape == (2, 2, len(ids), len(ids))
    q_weight = onnx_model.weights["blocks.1.attn.q_proj.weight"]  # (C, C), first third of c_attn
    assert np.array_equal(q_weight, sd["transformer.h.1.attn.c_attn.weight"][:16].numpy())
    assert np.allclose(out["attn"].sum(-1), 1.0, atol=1e-5)


def test_char_tokenizer_round_trip_and_unknown(nanogpt):
    model, spec, _ = convert_nanogpt(nanogpt[1], nanogpt[2])
    assert spec == {"kind": "char", "stoi": STOI}
    tokenizer = build(check_spec(spec, model.cfg.vocab_size, "meta.pkl"))  # as the server does
    text = "Speak,  speak.\nAll: hear me\n"
    enc = encode(tokenizer, text)
    assert enc.ids == [STOI[c] for c in text] and not any(enc.unknown)
    assert decode(tokenizer, enc.ids) == text
    assert char_tokenizer(STOI).to_str() == tokenizer.to_str()
    enc = encode(tokenizer, "hear 👍 Zoë")  # no [UNK]: what the vocabulary lacks is left out
    assert enc.tokens == list("hear  o") and enc.left_out == ["👍", "Z", "ë"]
    assert "[UNK]" not in tokenizer.get_vocab() and not any(enc.unknown)


@pytest.mark.slow
def test_cli_writes_our_checkpoint_and_graphs(cli_out, nanogpt):
    names = sorted(p.name for p in cli_out.iterdir())
    assert names == ["ckpt.fast.onnx", "ckpt.inspect.onnx", "ckpt.lab.onnx", "ckpt.safetensors"]
    model, tokenizer, metadata = load_checkpoint(cli_out / "ckpt.safetensors")
    training = metadata["training"]  # nanoGPT's record, kept for the model card
    assert training["source"] == "nanoGPT" and training["converted_from"] == "ckpt.pt"
    assert training["iter_num"] == 250 and training["nanogpt_config"]["batch_size"] == 64
    idx = torch.tensor([[STOI[c] for c in "hear me"]])
    with torch.no_grad():
        assert torch.allclose(model(idx), nanogpt_forward(nanogpt[0], ARGS, idx), atol=1e-5)
    assert encode(tokenizer, "👍").left_out == ["👍"]


# --- our checkpoints and ONNX uploads ---------------------------------------------------


@pytest.mark.slow
def test_our_safetensors_upload_end_to_end(ours):
    model, _, data = ours
    onnx_model = load_upload({"tiny.safetensors": data})
    assert onnx_model.name == "upload: tiny.safetensors" and onnx_model.step_session is not None
    assert onnx_model.card.source == "safetensors checkpoint"
    assert onnx_model.card.parameters == model.num_parameters()
    assert onnx_model.card.config == model.cfg.to_dict()
    weights = onnx_model.weights
    assert np.array_equal(
        weights["blocks.0.attn.q_proj.weight"], model.blocks[0].attn.q_proj.weight.detach().numpy()
    )
    ids = encode(onnx_model.tokenizer, "the cat sat on the mat").ids
    with torch.no_grad():
        want = model(torch.tensor([ids]))  # (1, T, V)
    assert np.abs(onnx_model.inspect(ids)["logits"] - want.numpy()).max() <= 1e-5
    assert np.abs(onnx_model.recurrent(ids)["logits"] - want[0].numpy()).max() <= 1e-5


def test_onnx_upload_and_sniffing(cli_out, ours):
    files = {p.name: p.read_bytes() for p in cli_out.glob("*.onnx")}
    onnx_model = load_upload(files)
    assert onnx_model.name == "upload: ckpt.inspect.onnx" and not onnx_model.has_step
    assert onnx_model.card.source == "ONNX" and onnx_model.card.config["n_layer"] == 2
    assert onnx_model.weights is None
    optional = hostile.without_outputs(
        onnx.load_from_string(files["ckpt.inspect.onnx"]), contract.OPTIONAL_OUTPUTS
    )
    validate_onnx(optional.SerializeToString())  # a foreign graph may omit optional outputs
    assert sniff_format(files["ckpt.inspect.onnx"]) == "onnx"
    assert sniff_format(ours[2]) == "safetensors"
    assert sniff_format(ckpt_bytes(nanogpt_state(ARGS), ARGS, optimizer=False)) == "torch-zip"
    assert sniff_format(meta_bytes()) == "pickle"
    assert read_ours(ours[2], "tiny.safetensors")[0].cfg == ours[0].cfg


# --- hostile files ----------------------------------------------------------------------


def test_meta_pkl_that_runs_code_is_refused(tmp_path, nanogpt):
    target = tmp_path / "pwned"
    evil = pickle.dumps({"stoi": STOI, "itos": ITOS, "x": hostile.Touch(target)})
    with pytest.raises(
        UploadError, match=r"meta.pkl: refused: it tries to load '(posix|os)\.system'"
    ):
        load_meta_pkl(evil)
    with refused("refused: it tries to load"):
        load_upload({"ckpt.pt": nanogpt[1], "meta.pkl": evil})
    assert not target.exists()


def test_ckpt_whose_pickle_runs_code_is_refused(tmp_path):
    target = tmp_path / "pwned"
    buf = io.BytesIO()
    torch.save({"model": hostile.Touch(target), "model_args": ARGS}, buf)
    with refused(r"ckpt.pt: refused: it tries to load '(posix|os)\.system'"):
        convert_nanogpt(buf.getvalue(), meta_bytes())
    assert not target.exists()


@pytest.mark.slow
@pytest.mark.parametrize("where", ["initializer", "constant"])
def test_onnx_external_data_is_refused_without_opening(inspect_onnx, tmp_path, where):
    make = hostile.external_initializer if where == "initializer" else hostile.external_constant
    with refused("refused: tensor .* points to an outside file .*etc/passwd"):
        validate_onnx(make(inspect_onnx, "../../etc/passwd").SerializeToString())
    sentinel = hostile.OpenDetector(tmp_path / "sentinel")
    try:
        data = make(inspect_onnx, str(tmp_path / "sentinel")).SerializeToString()
        with refused("points to an outside file"):
            load_upload({"model.onnx": data})
    finally:
        assert not sentinel.close(), "the external data file was opened"


def test_onnx_custom_domain_is_refused(inspect_onnx):
    with refused("custom operator 'Pwn' from 'evil.ops'"):
        validate_onnx(hostile.custom_op(inspect_onnx).SerializeToString())


def test_onnx_missing_contract_outputs_are_named(inspect_onnx):
    bad = hostile.without_outputs(inspect_onnx, ("attn", "scores"))
    with refused("missing outputs: attn, scores"):
        validate_onnx(bad.SerializeToString())


def test_onnx_huge_dim_and_missing_metadata(inspect_onnx):
    bad = onnx.ModelProto()
    bad.CopyFrom(inspect_onnx)
    bad.graph.output[0].type.tensor_type.shape.dim[2].dim_value = 10**9
    with refused("declares a dimension of 1000000000"):
        validate_onnx(bad.SerializeToString())
    bad.CopyFrom(inspect_onnx)
    del bad.metadata_props[:]
    with refused("no 'config' metadata"):
        validate_onnx(bad.SerializeToString())


def test_nan_weights_are_refused():
    sd = nanogpt_state(ARGS)
    sd["transformer.h.1.mlp.c_fc.weight"][0, 0] = float("nan")
    with refused("transformer.h.1.mlp.c_fc.weight contains NaN"):
        convert_nanogpt(ckpt_bytes(sd, ARGS, optimizer=False), meta_bytes())


def test_wrong_shapes_and_inconsistent_model_args_are_refused():
    sd = nanogpt_state(ARGS)
    sd["transformer.h.0.attn.c_attn.weight"] = torch.zeros(40, 16)
    with refused(r"transformer.h.0.attn.c_attn.weight has shape \(40, 16\)"):
        convert_nanogpt(ckpt_bytes(sd, ARGS, optimizer=False), meta_bytes())
    sd = nanogpt_state(ARGS)
    args = {**ARGS, "block_size": 32}
    with refused(r"transformer.wpe.weight has shape \(16, 16\), the config needs \(32, 16\)"):
        convert_nanogpt(ckpt_bytes(sd, args, optimizer=False), meta_bytes())
    with refused("model_args\\['n_head'\\] must be a positive integer"):
        convert_nanogpt(ckpt_bytes(sd, {**ARGS, "n_head": "2"}, optimizer=False), meta_bytes())


def test_missing_keys_are_named():
    sd = nanogpt_state(ARGS)
    del sd["transformer.h.1.ln_2.weight"], sd["transformer.h.0.attn.c_attn.weight"]
    with refused(
        r"missing weights: transformer.h.0.attn.c_attn.weight, transformer.h.1.ln_2.weight$"
    ):
        convert_nanogpt(ckpt_bytes(sd, ARGS, optimizer=False), meta_bytes())


def test_inconsistent_or_missing_vocabulary(nanogpt):
    with refused("stoi\\['a'\\] = .* but itos"):
        load_meta_pkl(meta_bytes(itos={**ITOS, STOI["a"]: "b"}))
    with refused(
        "ckpt.pt: a nanoGPT checkpoint needs its vocabulary .* upload meta.pkl .* or "
        "GPT-2's tokenizer.json .*; nothing is downloaded$"
    ):
        load_upload({"ckpt.pt": nanogpt[1]})
    with refused(
        r"meta.pkl: only a vocabulary; upload it together with its ckpt.pt\. .* shrink it .* "
        r"python -m upload.convert ckpt.pt --meta meta.pkl --out converted/, then upload "
        "converted/ckpt.safetensors$"
    ):
        load_upload({"meta.pkl": nanogpt[2]})


@pytest.mark.parametrize("name", ["ckpt.pt", "meta.pkl", "tiny.safetensors", "model.onnx"])
def test_truncated_files_are_refused(nanogpt, ours, inspect_onnx, name):
    data = {
        "ckpt.pt": nanogpt[1],
        "meta.pkl": nanogpt[2],
        "tiny.safetensors": ours[2],
        "model.onnx": inspect_onnx.SerializeToString(),
    }[name]
    files = {name: data[: len(data) // 2]}
    if name == "ckpt.pt":
        files["meta.pkl"] = nanogpt[2]
    elif name == "meta.pkl":
        files["ckpt.pt"] = nanogpt[1]
    with refused(f"{name}: truncated or corrupt"):
        load_upload(files)


def test_zip_bombs_are_refused():
    bomb = hostile.zip_bytes({"archive/data.pkl": 16, "archive/data/0": MAX_ZIP_UNCOMPRESSED + 1})
    assert len(bomb) < 1 << 20  # a small upload...
    with refused(
        f"refused: it unpacks to more than {MAX_ZIP_UNCOMPRESSED // 2**20} MB .*: shrink it on "
        "your computer with python -m upload.convert ckpt.pt --meta meta.pkl --out converted/"
    ):
        load_upload({"ckpt.pt": bomb, "meta.pkl": meta_bytes()})
    dense = hostile.zip_bytes({"archive/data/0": 8 << 20})
    with refused("compressed more than 100 times"):
        convert_nanogpt(dense, meta_bytes())
    crowd = hostile.zip_bytes({f"archive/data/{i}": 0 for i in range(MAX_ZIP_MEMBERS + 1)})
    with refused(f"{MAX_ZIP_MEMBERS + 1} files inside"):
        convert_nanogpt(crowd, meta_bytes())


def test_wrong_extension_is_refused(inspect_onnx, ours):
    with refused("model.pt is not a PyTorch checkpoint: it looks like an ONNX file"):
        load_upload({"model.pt": inspect_onnx.SerializeToString(), "meta.pkl": meta_bytes()})
    with refused("m.onnx is not an ONNX file: it looks like a safetensors checkpoint"):
        load_upload({"m.onnx": ours[2]})
    with refused("old.pt is not a PyTorch zip checkpoint but a bare pickle"):
        load_upload({"old.pt": meta_bytes()})
    with refused("unsupported file type"):
        load_upload({"notes.txt": b"hello"})


def test_oversize_file_is_refused():
    big = bytes(MAX_UPLOAD_BYTES + 1)
    with refused("ckpt.pt: too large .* the limit is 50,000,000 bytes \\(50 MB\\) per file"):
        load_upload({"ckpt.pt": big, "meta.pkl": meta_bytes()})
    with refused(
        r"too large \(50,000,001 bytes\); the limit is 50,000,000 bytes \(50 MB\) per file$"
    ):
        validate_onnx(big)  # a graph: no command to shrink it


def test_mixed_uploads_and_non_nanogpt_pt_are_refused(ours, nanogpt):
    with refused("upload one model at a time"):
        load_upload({"a.safetensors": ours[2], "ckpt.pt": nanogpt[1]})
    buf = io.BytesIO()
    torch.save({"weight": torch.zeros(2)}, buf)
    with refused("not a nanoGPT checkpoint"):
        convert_nanogpt(buf.getvalue(), meta_bytes())


def test_config_too_large_to_build_is_refused(ours):
    cfg = {**ours[0].cfg.to_dict(), "vocab_size": 10**9}
    data = save(
        {"wte.weight": torch.zeros(1)}, metadata={"config": json.dumps(cfg), "tokenizer": "{}"}
    )
    with refused("refused: the config describes"):
        load_upload({"huge.safetensors": data})


def test_zip_inside_is_checked_before_torch(tmp_path):
    """A torch.save zip with one member flipped: the CRC check catches it."""
    data = bytearray(ckpt_bytes(nanogpt_state(ARGS), ARGS, optimizer=False))
    archive = zipfile.ZipFile(io.BytesIO(bytes(data)))
    member = next(m for m in archive.infolist() if m.filename.endswith("data/0"))
    data[member.header_offset + 200] ^= 0xFF  # inside the member's stored bytes
    with refused("ckpt.pt: truncated or corrupt"):
        convert_nanogpt(bytes(data), meta_bytes())


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("tied", [True, False])
def test_size_limit_counts_parameters_exactly(bias, tied):
    cfg = ModelConfig(
        vocab_size=37, n_layer=2, n_head=2, d_model=8, d_mlp=24, context_length=5,
        position_scheme="learned", bias=bias, ln_bias=bias, tie_weights=tied,
    )  # fmt: skip
    assert cfg.num_parameters() == Transformer(cfg).num_parameters()


def test_cli_files_honour_the_umask(cli_out):
    """#20 item 19: every file the converter writes is readable as the umask allows
    (safetensors alone creates 0o600: a teacher's shared folder could not read it)."""
    from models.checkpoint import current_umask

    want = 0o666 & ~current_umask()
    modes = {p.name: oct(p.stat().st_mode & 0o777) for p in cli_out.iterdir()}
    assert modes == dict.fromkeys(modes, oct(want)), modes
