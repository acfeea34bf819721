"""The head grid: token by token for short sentences, an honest overview for long ones."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from tests.viz.test_attention import causal, figure, heatmaps
from viz import grid, spec, style


def attn(n_layers: int, n_heads: int, t: int) -> np.ndarray:
    """(L, H, T, T) float32 causal weights, each head its own."""
    maps = [causal(t, seed=k) for k in range(n_layers * n_heads)]
    return np.stack(maps).reshape(n_layers, n_heads, t, t).astype(np.float32)


def tokens(t: int) -> list[str]:
    return [f"w{i % 5}" for i in range(t)]


@pytest.mark.parametrize("t", [8, 64, 128])
def test_short_sentences_get_every_token(t):
    a = attn(2, 3, t)
    fig = grid.head_grid(a, tokens(t))
    maps = heatmaps(fig)
    assert [m.z.shape for m in maps] == [(t, t)] * 6  # not pooled
    np.testing.assert_array_equal(fig["data"][4]["z"], a[1, 1])
    assert fig["data"][0]["x"] == style.token_labels(tokens(t))
    assert "title" not in fig["layout"]


@pytest.mark.parametrize("t", [129, 256, 1000, 1024])
def test_long_sentences_get_a_labelled_max_pooled_overview(t):
    a = attn(2, 2, t)
    fig = grid.head_grid(a, tokens(t))
    block = math.ceil(t / grid.OVERVIEW_CELLS)
    n = math.ceil(t / block)
    assert grid.overview_block(4, t) == block and n <= grid.OVERVIEW_CELLS
    z = np.asarray(fig["data"][3]["z"])  # L1 H1
    assert z.shape == (n, n) and z.dtype == np.float32
    for i, j in [(0, 0), (n - 1, 0), (n - 1, n - 1), (n // 2, n // 3)]:  # the real maxima
        rows, cols = slice(i * block, (i + 1) * block), slice(j * block, (j + 1) * block)
        assert z[i, j] == a[1, 1, rows, cols].max()
    assert np.all(np.triu(z, 1) == 0)  # blocks wholly after the query stay empty
    labels = fig["data"][0]["x"]
    assert labels[0] == f"0–{block - 1}" and labels[-1].endswith(str(t - 1))
    title = fig["layout"]["title"]["text"]
    assert f"Overview of {t} tokens" in title and f"max over a block of {block} × {block}" in title
    assert "max weight" in fig["data"][0]["hovertemplate"]
    assert fig["layout"]["coloraxis"]["colorbar"]["title"]["text"] == "max weight"
    figure(fig)  # valid plotly


def test_the_last_block_holds_the_rest():
    t = 1000  # blocks of 16: 62 full ones and one of 8
    fig = grid.head_grid(attn(1, 1, t), tokens(t))
    assert fig["data"][0]["x"][-1] == "992–999"
    assert "63 blocks per axis (the last of 8 tokens)" in fig["layout"]["title"]["text"]


def test_a_large_grid_is_an_overview_sooner_and_stays_small_to_send():
    """12 layers x 12 heads (GPT-2 small): the overview starts where the token-by-token
    grid would send more than MAX_VALUES weights."""
    assert grid.overview_block(144, 32) == 1 and grid.overview_block(144, 33) > 1
    assert grid.overview_block(12, 64) == 1  # the shipped models' grid, full context
    for n_maps, t in [(144, 1024), (36, 256), (36, 128), (4, 1024)]:
        block = grid.overview_block(n_maps, t)
        assert n_maps * math.ceil(t / block) ** 2 <= grid.MAX_VALUES


def test_overview_json_is_small():
    fig = grid.head_grid(attn(6, 6, 256), tokens(256))
    size = len(json.dumps(spec.wire(fig)))
    assert size < 1_000_000  # the token-by-token grid would be 13 MB


def test_max_pool_matches_a_loop():
    a = np.random.default_rng(0).random((2, 3, 10, 10)).astype(np.float32)
    pooled, starts = grid.max_pool(a, 4)
    assert starts.tolist() == [0, 4, 8] and pooled.shape == (2, 3, 3, 3)
    for i, r in enumerate(starts):
        for j, c in enumerate(starts):
            np.testing.assert_array_equal(
                pooled[..., i, j], a[..., r : r + 4, c : c + 4].max((-1, -2))
            )
