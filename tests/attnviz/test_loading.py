"""``attnviz.load``: the shipped kinds, folders of our graphs, a lone inspect graph, and a
nanoGPT checkpoint converted once (the app's converter) and kept in the cache."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import torch

import attnviz
from attnviz.loading import NOTEBOOK_CACHE
from tests.helpers import EXPORTED
from tests.helpers.nanogpt_layout import (
    ARGS,
    STOI,
    ckpt_bytes,
    meta_bytes,
    nanogpt_forward,
    nanogpt_state,
)
from upload.errors import UploadError


def _copy(kind: str, roles: tuple[str, ...], dest) -> None:
    dest.mkdir(exist_ok=True)
    for role in roles:
        name = f"{kind}.safetensors" if role == "weights" else f"{kind}.{role}.onnx"
        shutil.copy(EXPORTED / name, dest / name)


def test_a_shipped_kind_and_the_models_folder_variable(tmp_path, monkeypatch):
    model = attnviz.load("linear")
    assert model.name == "linear" and model.config.attention == "linear"
    assert model.runnable.has_step and model.runnable.has_lab
    _copy("softmax", ("inspect", "fast"), tmp_path)
    monkeypatch.setenv("ATTNVIZ_MODELS_DIR", str(tmp_path))
    assert attnviz.load("softmax").runnable.weights is None  # no checkpoint in that folder


def test_a_folder_of_one_models_graphs_and_its_inspect_graph(tmp_path):
    _copy("softmax", ("inspect", "fast", "lab", "weights"), tmp_path / "mine")
    model = attnviz.load(tmp_path / "mine", name="mine")
    assert model.name == "mine" and model.runnable.has_lab and model.runnable.weights
    shipped = attnviz.load("softmax").analyse("the cat sat").attention
    assert np.array_equal(model.analyse("the cat sat").attention, shipped)
    _copy("linear", ("inspect", "lab"), tmp_path / "lean")  # --inspect-only: no fast graph
    lean = attnviz.load(tmp_path / "lean" / "linear.inspect.onnx")
    assert lean.name == "linear" and lean.runnable.fast_session is None and lean.runnable.has_lab


def test_refusals_are_one_line(tmp_path):
    with pytest.raises(UploadError, match=r"^nope: no such file or folder, nor a shipped kind"):
        attnviz.load("nope")
    with pytest.raises(UploadError, match=r"exported/: holds \d+ models .*give one's"):
        attnviz.load(EXPORTED)
    (tmp_path / "notes.txt").write_text("hi")
    with pytest.raises(UploadError, match=r"notes.txt: not a checkpoint"):
        attnviz.load(tmp_path / "notes.txt")
    with pytest.raises(UploadError, match="missing config.json"):
        attnviz.load(tmp_path)  # neither graphs, nor ckpt.pt, nor a Hugging Face folder


@pytest.mark.slow  # the conversion exports four graphs: ~15 s
def test_a_nanogpt_checkpoint_is_converted_once_and_computes_nanogpts_logits(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNVIZ_CACHE_DIR", str(tmp_path / "cache"))
    sd = nanogpt_state(ARGS)
    out = tmp_path / "out"
    out.mkdir()
    (out / "ckpt.pt").write_bytes(ckpt_bytes(sd, ARGS))
    (tmp_path / "meta.pkl").write_bytes(meta_bytes())
    model = attnviz.load(out, meta=tmp_path / "meta.pkl")  # nanoGPT's out/ folder
    text = "Speak, speak."
    s = model.analyse(text)
    ids = torch.tensor([[STOI[c] for c in text]])
    reference = nanogpt_forward(sd, ARGS, ids)[0].detach().numpy()  # (T, V)
    assert s.ids == ids[0].tolist()
    assert np.allclose(s.logits, reference, atol=1e-4)
    assert s.attention.shape == (2, 2, len(text), len(text)) and model.runnable.has_lab
    cached = list((tmp_path / "cache" / NOTEBOOK_CACHE).iterdir())
    again = attnviz.load(out / "ckpt.pt", meta=tmp_path / "meta.pkl")  # the same files
    assert list((tmp_path / "cache" / NOTEBOOK_CACHE).iterdir()) == cached and len(cached) == 1
    assert np.array_equal(again.analyse(text).attention, s.attention)
