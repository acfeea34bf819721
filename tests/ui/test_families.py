"""Llama, Mistral, Qwen2 and GPT-NeoX folders served by the app (``--model DIR``), every view
drawn for each in an AppTest, and what each view says of their architecture: the query
heads sharing a key/value head, RoPE's wavelengths and measured offset curve, the
sliding window in the mask, the reshape with H_kv, RMSNorm and SwiGLU in the block."""

from __future__ import annotations

import re
import sys
import time

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

from tests.helpers import ROOT
from tests.helpers.charts import plotly_charts
from tests.helpers.family_folders import FAMILIES, family_model, save_family_folder
from tests.helpers.pages import open_page, short_patching_pair
from ui import served, served_cache
from ui.lessons.merged import ROTARY_NOTE
from ui.visualizer import VIEWS

pytestmark = pytest.mark.slow  # four conversions and exports, then 4 x 11 views
APP = str(ROOT / "app.py")
TEXT = "the cat sat on the mat and the dog sat on the log"


@pytest.fixture(scope="module")
def family_server(tmp_path_factory):
    """The four families' random folders, converted into a fresh cache; the folders."""
    base = tmp_path_factory.mktemp("families")
    hf = {f: family_model(f) for f in FAMILIES}
    folders = [save_family_folder(hf[f], base / f"tiny-{f}") for f in FAMILIES]
    models = served.ServedModels(folders, root=base / "cache")
    models.thread.join(timeout=600)
    assert models.ready() == [f"tiny-{f}" for f in FAMILIES], {
        k: e.error for k, e in models.entries.items()
    }
    return folders, models, hf


def test_the_exported_graphs_equal_transformers(family_server):
    """The served inspect graphs (ONNX, onnxruntime) of each family: transformers' logits
    and attention on a 40-token sentence, past every window."""
    _, models, hf = family_server
    ids = list(range(3, 283, 7))  # (40,)
    for family, model in hf.items():
        ours = models.get(f"tiny-{family}")
        with torch.no_grad():
            want = model(torch.tensor([ids]), output_attentions=True)
        logits = want.logits[0].numpy()  # (T, V)
        assert np.abs(ours.logits(ids) - logits).max() <= 1e-4 * np.abs(logits).max(), family
        attn = ours.inspect(ids, ("attn",))["attn"]  # (L, H, T, T)
        want_attn = torch.stack([a[0] for a in want.attentions]).numpy()
        assert np.abs(attn - want_attn).max() <= 1e-4, family  # GPT-Neo's unscaled: 1.1e-5


@pytest.fixture
def app(family_server, monkeypatch):
    """app.py as ``streamlit run app.py -- --model <each folder>`` runs it."""
    from ui import loaders

    folders, models, _ = family_server
    root = models.root
    monkeypatch.setattr(sys, "argv", ["app.py", *[a for f in folders for a in ("--model", str(f))]])
    monkeypatch.setenv(served_cache.CACHE_VARIABLE, str(root))
    loaders.served_models.clear()
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    deadline = time.monotonic() + 120
    while "tiny-gpt_neox" not in at.radio(key="model").options and time.monotonic() < deadline:
        time.sleep(0.5)
        at.run()
    yield at
    loaders.served_models.clear()


def _charts(at) -> dict:
    return {c.key: c.spec for c in plotly_charts(at)}


def _title(spec: dict) -> str:
    return spec["layout"]["title"]["text"]


@pytest.mark.parametrize("family", FAMILIES)
def test_every_view_draws_each_family(app, family):
    at = app
    at.radio(key="model").set_value(f"tiny-{family}").run()
    at.text_area(key="text").set_value(TEXT).run()
    for view in VIEWS:
        at.segmented_control(key="view").set_value(view).run()
        if view == "patch" and at.warning:  # the default pair: too long for a byte-level BPE?
            short_patching_pair(at)
        assert not at.exception, (view, [e.value for e in at.exception])
        assert not at.error, (view, [e.value for e in at.error])
        assert plotly_charts(at) or at.get("vega_lite_chart") or at.dataframe, view
    open_page("merged", at)
    assert not at.exception, [e.value for e in at.exception]
    if family == "gpt_neo":  # learned positions: W_QK (W_Q times sqrt(d_head)) gives its scores
        assert float(at.metric[0].value) < 1e-3, at.metric[0].value
    else:  # RoPE: no single W_QK gives the scores
        assert any(ROTARY_NOTE in i.value for i in at.info)


def test_the_llama_views_say_grouped_query_attention_and_rope(app):
    at = app
    at.radio(key="model").set_value("tiny-llama").run()
    at.text_area(key="text").set_value(TEXT).run()
    card = " ".join(m.value for m in at.sidebar.markdown)
    assert "2 key/value heads (grouped-query), RMSNorm, gated MLP, RoPE θ 500" in card, card
    at.selectbox(key="head").set_value(3).run()
    title = _title(_charts(at)["attn_big"])
    assert title.endswith("head 3 · key/value head 1, shared by heads 2–3"), title
    grid = _charts(at)["attn_grid"]["layout"]["annotations"]
    assert [a["text"] for a in grid[:4]] == [
        "L0 H0 · kv0",
        "L0 H1 · kv0",
        "L0 H2 · kv1",
        "L0 H3 · kv1",
    ]
    at.segmented_control(key="view").set_value("shapes").run()
    shapes = " ".join(m.value for m in at.markdown) + str(_charts(at))
    assert "repeat_interleave(2, dim=1)" in shapes and "H_kv=2" in shapes
    at.segmented_control(key="view").set_value("positional").run()
    charts = _charts(at)
    waves = charts["rope_waves"]["data"][0]
    assert len(waves["y"]["bdata"] if isinstance(waves["y"], dict) else waves["y"]) > 0
    assert "by offset" in _title(charts["rope_offsets"])
    caption = " ".join(c.value for c in at.caption)
    moved, differ = map(float, re.findall(r"\*\*([0-9.e+-]+)\*\*", caption)[:2])
    assert moved < 1e-4 and differ < 1e-4, caption  # only the offset counts; the model's score


def test_the_mistral_mask_draws_its_window(app):
    at = app
    at.radio(key="model").set_value("tiny-mistral").run()
    at.text_area(key="text").set_value(TEXT).run()
    at.segmented_control(key="view").set_value("mask").run()
    panels = _charts(at)["mask_panels"]
    titles = [a["text"] for a in panels["layout"]["annotations"]]
    assert "causal mask, sliding window 6" in titles, titles
    assert any("Sliding window 6" in m.value for m in at.markdown)
    at.segmented_control(key="view").set_value("block").run()
    assert "RMSNorm" in str(_charts(at)) and "SiLU" in str(_charts(at))
