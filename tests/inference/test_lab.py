"""Ablation, the importance grid and activation patching (inference/lab.py,
inference/patching.py) on the shipped lab graphs: the grid's cells are the single
ablations, run in parts or at once alike; mean-ablation's values are the heads' mean
outputs; the patching grids hit their fixed points (the final stream at the last position
is the whole answer, elsewhere it is nothing)."""

from __future__ import annotations

import numpy as np
import pytest

from inference import lab, patching
from inference.runtime import load_shipped
from models.config import SHIPPED_KINDS


@pytest.fixture(scope="module", params=SHIPPED_KINDS)
def model(request, exported_dir):
    return load_shipped(exported_dir, request.param)


def sentence(model, T=12, seed=0):
    return [int(i) for i in np.random.default_rng(seed).integers(0, model.config.vocab_size, T)]


def test_losses_are_the_cross_entropy(model):
    ids = sentence(model)
    logits = lab.lab(model, ids)["logits"]  # (1, T, V)
    p = np.exp(logits[0] - logits[0].max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    want = -np.log(p[np.arange(len(ids) - 1), ids[1:]])
    assert np.allclose(lab.next_token_losses(logits, ids)[0], want, atol=1e-5)


@pytest.mark.parametrize("mode", lab.MODES)
def test_grid_cells_are_single_ablations(model, mode, monkeypatch):
    ids, cfg = sentence(model), model.config
    means = np.random.default_rng(2).normal(size=(cfg.n_layer, cfg.n_head, cfg.d_head))
    grid = lab.importance_grid(model, ids, mode, means.astype(np.float32))
    for layer, head in [(0, 1), (cfg.n_layer - 1, cfg.n_head - 1)]:
        ab = lab.ablate(model, ids, [(layer, head)], mode, means.astype(np.float32))
        before, after = ab.mean_losses
        assert grid[layer, head] == pytest.approx(after - before, abs=1e-4)
    monkeypatch.setattr(lab, "FEED_BYTES", 1)  # one run a call: the same numbers
    assert np.allclose(
        lab.importance_grid(model, ids, mode, means.astype(np.float32)), grid, atol=1e-5
    )


def test_mean_outputs_are_the_heads_mean(model):
    rows = np.asarray([sentence(model, 10, s) for s in range(3)], np.int64)
    means = lab.mean_head_outputs(model, rows)
    every = np.stack([model.inspect(list(map(int, r)), ("head_out",))["head_out"] for r in rows])
    assert np.allclose(means, every.mean(axis=(0, 3)), atol=1e-5)


def test_ablation_refuses_what_is_not_a_head(model):
    with pytest.raises(ValueError, match="no head"):
        lab.ablate(model, sentence(model), [(model.config.n_layer, 0)])
    with pytest.raises(ValueError, match="mean needs"):
        lab.ablate(model, sentence(model), [(0, 0)], "mean", None)


@pytest.mark.parametrize("direction", patching.DIRECTIONS)
def test_residual_patching_fixed_points(model, direction):
    clean, corrupted, correct, wrong = patching.ioi_pair()
    enc = model.tokenizer.encode
    c, k = enc(clean).ids, enc(corrupted).ids
    assert len(c) == len(k)
    result = patching.patch_residual(model, c, k, enc(correct).ids[0], enc(wrong).ids[0], direction)
    last = 1.0 if direction == "denoise" else 0.0  # the final stream at the last position
    assert result.grid[-1, -1] == pytest.approx(last, abs=1e-4)
    assert np.allclose(result.grid[-1, :-1], 1.0 - last, atol=1e-4)  # other positions: nothing
    heads = patching.patch_heads(model, c, k, enc(correct).ids[0], enc(wrong).ids[0], direction)
    assert heads.grid.shape == (model.config.n_layer, model.config.n_head)
    assert heads.clean == pytest.approx(result.clean)
    assert heads.corrupted == pytest.approx(result.corrupted) != heads.clean
    # the models that solve the indirect-object task (card: softmax and delta 99-100%; the
    # linear model 50%, at chance) prefer the right name on the clean sentence
    assert heads.clean > heads.corrupted or model.config.attention == "linear"


def test_patching_needs_equal_lengths(model):
    with pytest.raises(ValueError, match="same length"):
        patching.patch_heads(model, [1, 2, 3], [1, 2], 1, 2)


def test_sharpness_runs_from_uniform_to_one_key():
    T = 6
    one_key = np.zeros((1, 2, T, T))
    one_key[0, 0, :, 0] = 1.0  # every query on the first token
    causal = np.tril(np.ones((T, T)))
    one_key[0, 1] = causal / causal.sum(-1, keepdims=True)  # uniform over the past
    sharp = lab.sharpness(one_key)
    assert sharp[0, 0] == pytest.approx(1.0)
    assert sharp[0, 1] == pytest.approx(np.mean([1 / t for t in range(2, T + 1)]))
    assert lab.sharpness(-one_key)[0, 0] == pytest.approx(1.0)  # signed weights by magnitude


def test_looks_and_does_picks_a_striking_idle_head_and_a_plain_busy_one():
    sharp = np.array([[0.9, 0.8, 0.2, 0.3]])
    effect = np.array([[0.5, 0.01, 0.4, 0.1]])
    assert lab.looks_and_does(sharp, effect) == ((0, 1), (0, 2))


def test_a_sentence_too_long_for_the_lens_is_refused_in_one_line():
    from models.config import ModelConfig

    gpt2 = ModelConfig(vocab_size=50257, n_layer=12, n_head=12, d_model=768, context_length=1024)
    line = lab.too_long(gpt2, 1024)
    assert line and "\n" not in line and "at most 205 tokens" in line
    assert lab.too_long(gpt2, 205) is None
