"""Download payloads: NPY round trips exactly, CSV holds the selected head with labels, an
NPZ holds every array and a manifest of their names, shapes and axes."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

from ui.downloads import AXES, MANIFEST, _csv_slice, csv_bytes, npy_bytes, npz_bytes


def test_npy_round_trips_without_pickle():
    a = np.random.default_rng(0).normal(size=(2, 3, 4, 4)).astype(np.float32)
    back = np.load(io.BytesIO(npy_bytes(a)), allow_pickle=False)
    assert back.dtype == np.float32
    np.testing.assert_array_equal(back, a)


def test_csv_of_the_selected_head_with_token_labels():
    attn = np.random.default_rng(1).random((2, 3, 4, 4))  # (L, H, T, T)
    tokens = ["the", "=cmd", "the", "cat"]
    label, suffix, data = _csv_slice("attn", attn, 1, 2, tokens)
    assert label == "attn[layer 1, head 2]" and suffix == "_L1H2"
    frame = pd.read_csv(io.BytesIO(data()), index_col=0)
    assert list(frame.index) == ["0:the", "1:=cmd", "2:the", "3:cat"]  # unique rows
    assert list(frame.columns) == list(frame.index)  # keys are tokens too
    np.testing.assert_allclose(frame.to_numpy(), attn[1, 2], rtol=1e-5)


def test_csv_formula_injection_is_defused():
    text = csv_bytes(np.eye(2), ["=HYPERLINK()", "+1"], ["@a", "b"]).decode()
    assert "'=HYPERLINK()" in text and "'+1" in text and "'@a" in text


def test_csv_of_per_head_vectors_and_plain_matrices():
    q = np.ones((2, 2, 3, 5))  # (L, H, T, d_head)
    label, _, data = _csv_slice("q", q, 0, 1, ["a", "b", "c"])
    frame = pd.read_csv(io.BytesIO(data()), index_col=0)
    assert frame.shape == (3, 5) and list(frame.columns) == [f"dim {j}" for j in range(5)]
    pe = np.zeros((7, 4))  # (P, C): more positions than tokens: no token labels
    _, suffix, data = _csv_slice("pos_enc", pe, 0, 0, ["a", "b"])
    assert suffix == "" and pd.read_csv(io.BytesIO(data())).shape == (7, 4)
    assert _csv_slice("state", np.zeros((1, 1, 3, 2, 2)), 0, 0, None) is None  # NPY only
    with pytest.raises(ValueError):
        csv_bytes(np.zeros((2, 2, 2)))


def test_npz_holds_every_array_and_a_manifest_of_their_shapes():
    named = {"attn": np.random.default_rng(2).random((2, 3, 4, 4)).astype(np.float32),
             "grid": np.arange(6, dtype=np.int64).reshape(2, 3)}  # fmt: skip
    about = {"model": "softmax", "sentence": "a b", "layer": 1, "head": 2,
             "axes": {"grid": ("layer", "head")}}  # fmt: skip
    archive = np.load(io.BytesIO(npz_bytes(named, about)), allow_pickle=False)
    assert sorted(archive.files) == ["attn", "grid", MANIFEST]
    for name, array in named.items():
        np.testing.assert_array_equal(archive[name], array)
    manifest = json.loads(archive[MANIFEST])
    assert manifest["model"] == "softmax" and (manifest["layer"], manifest["head"]) == (1, 2)
    assert "axes" not in manifest  # folded into each array's entry
    assert manifest["arrays"] == {
        "attn": {"shape": [2, 3, 4, 4], "dtype": "float32", "axes": list(AXES["attn"])},
        "grid": {"shape": [2, 3], "dtype": "int64", "axes": ["layer", "head"]},
    }
    assert archive["grid"].dtype == np.int64
