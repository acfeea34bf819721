"""inference.view_specs: the views' figures from one analysis and plain model facts, no
Streamlit (the app caches them, the bench times them): each figure holds the analysis's
own numbers."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from inference import view_specs as figs
from inference.analysis import analyze, induction_probe, positional_encoding, with_recurrent
from inference.block import block_numbers, block_outputs
from inference.predictions import id_to_token
from inference.runtime import load_shipped
from models.config import ModelConfig
from viz.positional import default_dims
from viz.spec import wired

SENTENCE = "when mary and john went to the store , john gave a drink to mary ."


@dataclass
class Facts:
    name: str
    config: ModelConfig
    vocab: list[str]
    pos_enc: np.ndarray
    induction: np.ndarray | None


@pytest.fixture(scope="module")
def linear(exported_dir):
    model = load_shipped(exported_dir, "linear")
    facts = Facts("linear", model.config, id_to_token(model), positional_encoding(model),
                  induction_probe(model))  # fmt: skip
    return model, facts, analyze(model, SENTENCE, recurrent=False)


def _z(spec: dict, i: int = 0) -> np.ndarray:
    return np.asarray(spec["data"][i]["z"], dtype=float)


def test_the_heatmaps_hold_the_analysis_weights(linear):
    _, facts, result = linear
    attn = result.outputs["attn"]  # (L, H, T, T)
    spec = figs.attention(facts, result, 1, 2, "selected head", 4)
    np.testing.assert_allclose(_z(spec), attn[1, 2], rtol=1e-6, equal_nan=True)
    mean = figs.head_weights(result, 1, None, "mean over heads")
    np.testing.assert_allclose(mean, attn[1].mean(0), rtol=1e-6)
    cmp = figs.compare(facts, result, 0, 3)
    assert cmp["layout"]["title"]["text"].startswith("linear: L0 H3")
    np.testing.assert_allclose(_z(cmp), attn[0, 3], rtol=1e-6, equal_nan=True)
    assert wired(spec)  # what the app caches and ships


def test_shapes_recurrence_and_block_figures_use_this_model(linear):
    model, facts, result = linear
    cfg = facts.config
    flow = figs.shape_flow(facts, result, 1)
    assert f"d_model={cfg.d_model}" in flow["layout"]["title"]["text"]
    q = figs.qkv(facts, result, 0, 1, "q")
    np.testing.assert_allclose(_z(q), result.outputs["q"][0, 1], rtol=1e-6)
    lin = with_recurrent(model, result)
    state = figs.recurrent_state(facts, lin, 0, 1, result.T - 1)
    np.testing.assert_allclose(_z(state), lin.recurrent["state"][0, 1, -1], rtol=1e-6)
    nums = block_numbers(block_outputs(model, result.ids, 1))
    bars = figs.block_contributions(result, nums, 1, 3)
    assert bars["layout"]["title"]["text"].startswith("Block 1")
    assert (
        f"d_mlp = {cfg.d_mlp}"
        in figs.block_flow(facts, result, nums, 1, 3)["layout"]["title"]["text"]
    )


def test_tables_and_the_model_only_charts(linear):
    _, facts, result = linear
    L, H = facts.config.n_layer, facts.config.n_head
    stats = figs.head_stats(facts, result)
    assert stats.num_rows == L * H
    top = figs.top_next(facts, result, 3)
    assert top.num_rows == result.T and top.column("token").to_pylist()[0] == "when"
    best = int(np.argmax(result.probs[-1]))
    bars = figs.top_k(facts, result, result.T - 1)
    assert facts.vocab[best] in [str(x) for x in bars["data"][0]["y"]]
    curves = figs.pe_curves(facts, None, default_dims(facts.config.d_model), result.T)
    assert curves["datasets"]  # Vega-Lite with its data as Arrow


def test_the_difference_of_two_models_is_b_minus_a_of_their_own_weights(exported_dir):
    """Compare models (#48 item 4): B − A of one head, on a scale symmetric at 0; models
    of other head counts or other tokens get one line instead."""
    softmax = load_shipped(exported_dir, "softmax")
    a = analyze(softmax, SENTENCE, recurrent=False)
    b = analyze(load_shipped(exported_dir, "linear"), SENTENCE, recurrent=False)
    assert a.ids == b.ids and figs.no_difference(a, b) is None
    fig = figs.difference(a, b, 1, 2, "B − A")  # numpy arrays, before the wire
    (heat,) = [t for t in fig["data"] if t["type"] == "heatmap"]
    z = np.asarray(heat["z"], dtype=float)
    want = b.outputs["attn"][1, 2] - a.outputs["attn"][1, 2]  # (T, T)
    np.testing.assert_allclose(z, want, atol=1e-6)
    assert heat["zmin"] == -heat["zmax"] == -np.abs(want).max()
    shorter = analyze(softmax, "the cat sat", recurrent=False)
    assert "A: 16 tokens, B: 3" in figs.no_difference(a, shorter)
    fewer = analyze(softmax, SENTENCE, recurrent=False)
    fewer.outputs = {"attn": a.outputs["attn"][:, :2]}  # (L, 2, T, T)
    assert "A has 3 layers × 4 heads, B 3 × 2" in figs.no_difference(a, fewer)
