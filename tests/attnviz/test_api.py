"""The notebook API on the shipped models: its arrays are the app's analysis, its figures
the app's builders' on the same arrays, its interventions the lab's (issue #48 item 2)."""

from __future__ import annotations

import re

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest

import attnviz
from attnviz import views
from inference import lab, patching, view_specs
from inference.analysis import analyze
from inference.block import block_outputs
from inference.runtime import load_shipped
from models.tokenizer import encode
from tests.helpers import EXPORTED

TEXT = "when Mary and John went to the store , John gave a drink to Mary ."


@pytest.fixture(scope="module")
def softmax():
    return attnviz.load("softmax")


@pytest.fixture(scope="module")
def sentence(softmax):
    return softmax.analyse(TEXT)


@pytest.fixture(scope="module")
def app():
    """The app's own analysis of TEXT (``ui.loaders``: load_shipped, then analyze)."""
    return analyze(load_shipped(EXPORTED, "softmax"), TEXT)


def test_the_arrays_are_the_apps_analysis(sentence, app):
    cfg = sentence.model.config
    L, H, T, D = cfg.n_layer, cfg.n_head, sentence.T, cfg.d_head
    assert sentence.tokens == app.display_tokens and T == 16
    named = {"attention": "attn", "q": "q", "k": "k", "v": "v", "head_out": "head_out",
             "scores": "scores"}  # fmt: skip
    for attr, output in named.items():
        assert np.array_equal(getattr(sentence, attr), app.outputs[output]), attr
    assert sentence.attention.shape == (L, H, T, T) and sentence.q.shape == (L, H, T, D)
    assert np.array_equal(sentence.logits, app.outputs["logits"][0])  # (T, V)
    assert np.allclose(sentence.probs.sum(-1), 1, atol=1e-5)


def test_the_residual_stream_is_each_blocks_input_then_the_last_output(sentence):
    L, C = sentence.model.config.n_layer, sentence.model.config.d_model
    resid = sentence.residual
    assert resid.shape == (L + 1, sentence.T, C)
    for layer in range(L):
        got = block_outputs(sentence.model.runnable, sentence.ids, layer)
        assert np.array_equal(resid[layer], got["resid_pre"].reshape(sentence.T, C))
    last = block_outputs(sentence.model.runnable, sentence.ids, L - 1)["resid_post"]
    assert np.array_equal(resid[L], last.reshape(sentence.T, C))
    assert set(sentence.arrays()) >= {"attn", "q", "k", "v", "head_out", "logits", "residual"}


def test_the_attention_figure_is_the_apps_builder_on_the_same_arrays(sentence, app):
    fig = views.attention(sentence, layer=2, head=3, query=4)
    spec = view_specs.attention(sentence.model, app, 2, 3, "selected head", 4)
    assert isinstance(fig, go.Figure)
    assert np.array_equal(views.array_of(fig), app.outputs["attn"][2, 3])
    assert np.array_equal(np.asarray(fig.data[0].z), np.asarray(spec["data"][0]["z"]))
    assert fig.layout.title.text == spec["layout"]["title"]["text"] == "Layer 2, head 3"
    mean = views.attention(sentence, layer=1, mode="mean over heads")
    assert np.allclose(views.array_of(mean), app.outputs["attn"][1].mean(0))


def test_every_view_returns_a_figure(softmax, sentence):
    other = attnviz.load("linear").analyse(TEXT)
    figures = [views.head_grid(sentence), views.shapes(sentence, 1), *views.compare(sentence, other),
               views.qkv(sentence, 0, 1, "v"), views.mask(sentence, 0, 1), views.block(sentence, 1),
               views.predictions(sentence), views.recurrence(other, 0, 0)]  # fmt: skip
    assert all(isinstance(f, go.Figure) and (f.data or f.layout.annotations) for f in figures)
    assert np.array_equal(views.array_of(figures[4]), sentence.v[0, 1])
    assert views.stats(sentence).shape[0] == 3 * 4
    assert views.next_tokens(sentence, 3).shape == (sentence.T, 2 + 2 * 3)
    assert views.positional(softmax).to_dict()["$schema"].startswith("https://vega.github.io/")
    with pytest.raises(ValueError, match="no linear recurrent form"):
        views.recurrence(sentence)


def test_ablation_and_importance_are_the_labs(softmax, sentence):
    ours = attnviz.ablate(sentence, [(1, 2)])
    theirs = lab.ablate(softmax.runnable, sentence.ids, [(1, 2)], "zero")
    assert np.array_equal(ours.losses, theirs.losses) and ours.losses.shape == (2, sentence.T - 1)
    grid = attnviz.importance(sentence)
    assert grid.shape == (3, 4)
    assert np.allclose(views.array_of(views.importance(sentence)), grid)
    fig = views.ablation(sentence, [(1, 2)])
    assert np.allclose(fig.data[1].y, ours.losses[1])


def test_patching_and_the_lens_are_the_labs(softmax, sentence):
    clean, corrupted, answer, wrong = attnviz.default_pair(softmax)
    heads, resid = attnviz.patch(softmax, clean, corrupted, answer, wrong)
    tok = softmax.tokenizer
    a, w = encode(tok, f" {answer}").ids, encode(tok, f" {wrong}").ids
    same = patching.patch_heads(softmax.runnable, encode(tok, clean).ids,
                                encode(tok, corrupted).ids, a[0], w[0])  # fmt: skip
    assert np.array_equal(heads.grid, same.grid, equal_nan=True)
    assert resid.grid.shape == (4, len(encode(tok, clean).ids))
    out = attnviz.lens(sentence)
    assert out["lens_top"].shape == (4, sentence.T)
    assert np.allclose(views.array_of(views.lens(sentence)), out["lens_target_prob"])
    with pytest.raises(ValueError, match="same length"):
        attnviz.patch(softmax, clean, clean + " and more", answer, wrong)


def test_import_makes_figures_draw_offline():
    assert pio.renderers.default == "attnviz"
    html = pio.renderers["attnviz"].to_mimebundle(go.Figure(go.Bar(y=[1])).to_dict())["text/html"]
    tags = re.findall(r"<script\b[^>]*>", html)
    assert "* plotly.js v" in html and tags and not [t for t in tags if "src" in t]
