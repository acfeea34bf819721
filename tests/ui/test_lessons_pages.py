"""The lesson pages under streamlit.testing.v1.AppTest, opened through app.py's navigation."""

from __future__ import annotations

import base64

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from models.config import SHIPPED_KINDS
from tests.helpers import EXPORTED
from tests.helpers.charts import plotly_charts
from tests.helpers.pages import APP, open_page

PAGES = ("soft-hard", "scoring", "kernel", "merged")


def no_errors(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _decode(z) -> np.ndarray:
    if isinstance(z, dict):
        flat = np.frombuffer(base64.b64decode(z["bdata"]), dtype=np.dtype(z["dtype"]))
        return flat.reshape([int(n) for n in str(z["shape"]).split(",")])
    return np.asarray(z, dtype=float)


def heatmaps(at: AppTest) -> list[np.ndarray]:
    specs = [el.spec for el in plotly_charts(at)]
    return [_decode(t["z"]) for s in specs for t in s["data"] if t["type"] == "heatmap"]


def metric(at: AppTest, label_part: str) -> str:
    return next(m.value for m in at.metric if label_part in m.label)


@pytest.fixture(scope="module")
def app() -> AppTest:
    return AppTest.from_file(APP, default_timeout=120).run()


@pytest.mark.parametrize("url_path", PAGES)
@pytest.mark.parametrize("model", SHIPPED_KINDS)
def test_every_lesson_renders(app, url_path, model):
    open_page(url_path, app)
    app.radio(key="model").set_value(model).run()
    no_errors(app)
    assert app.title and plotly_charts(app) and app.metric
    assert app.latex  # the formulas


def test_beta_slider_moves_from_uniform_to_one_hot():
    at = open_page("soft-hard")
    slider = at.select_slider(key="lesson_beta")
    assert slider.value == 1.0
    at_1 = heatmaps(at)[0]
    slider.set_value(0.0).run()
    uniform = heatmaps(at)[0]
    T = uniform.shape[0]
    assert np.allclose(uniform[T - 1, :], 1 / T)
    at.select_slider(key="lesson_beta").set_value(float("inf")).run()
    hard = heatmaps(at)[0]
    assert not np.allclose(hard, at_1) and set(np.unique(hard)) <= {0.0, 1.0}
    assert np.allclose(hard.sum(1), 1.0)
    assert float(metric(at, "Mean entropy")) == 0.0
    no_errors(at)


def test_softmax_model_check_on_soft_hard_page():
    at = open_page("soft-hard")
    assert float(metric(at, "softmax₁(scores) − model|")) <= 1e-5


def test_kernel_and_reordering_measurements():
    at = open_page("kernel")
    assert float(metric(at, "max |left − right|")) <= 1e-9
    assert float(metric(at, "− model|")) <= 1e-6
    at.radio(key="model").set_value("linear").run()
    assert float(metric(at, "− model|")) <= 1e-6
    captions = " ".join(c.value for c in at.caption)
    assert "φ(qᵢ)ᵀzᵢ / (φ(qᵢ)ᵀzᵢ + ε)" in captions and "below 1" in captions


def _shipped_outputs(kind: str, text: str) -> tuple:
    from inference.analysis import analyze
    from inference.runtime import load_shipped

    model = load_shipped(EXPORTED, kind)
    return model.config, analyze(model, text).outputs


@pytest.mark.parametrize("kind", SHIPPED_KINDS)
def test_kernel_page_on_every_head(kind):
    """The page's own metric on every layer and head of the shipped models: the
    model's kernel (with its eps) matches its attention, no panel has NaN or inf,
    and the row sums shown are the model's."""
    at = open_page("kernel")
    at.radio(key="model").set_value(kind).run()
    cfg, out = _shipped_outputs(kind, at.text_area(key="text").value)
    for layer in range(cfg.n_layer):
        at.selectbox(key="layer").set_value(layer).run()
        for head in range(cfg.n_head):
            at.selectbox(key="head").set_value(head).run()
            no_errors(at)
            if kind == "delta":  # no kernel of its own: no such metric
                assert not [m for m in at.metric if "− model|" in m.label]
            else:
                assert float(metric(at, "− model|")) <= 1e-6, (layer, head)
            exp_w, phi_w = heatmaps(at)[:2]
            assert np.isfinite(exp_w).all() and np.isfinite(phi_w).all(), (layer, head)
            assert np.allclose(exp_w.sum(1), 1.0)
            if kind == "linear":
                sums = out["attn"][layer, head].sum(-1)  # (T,)
                shown = float(metric(at, "smallest φ row sum"))
                assert shown == pytest.approx(sums.min(), rel=2e-3, abs=1e-6)
                assert np.allclose(phi_w, out["attn"][layer, head], atol=1e-6)


@pytest.mark.parametrize("kind", SHIPPED_KINDS)
def test_scoring_page_shows_the_models_score_variance(kind):
    at = open_page("scoring")
    at.radio(key="model").set_value(kind).run()
    at.selectbox(key="layer").set_value(1).run()
    at.selectbox(key="head").set_value(2).run()
    no_errors(at)
    cfg, out = _shipped_outputs(kind, at.text_area(key="text").value)
    q, k = out["q"][1, 2].astype(np.float64), out["k"][1, 2].astype(np.float64)  # (T, D)
    causal = (q @ k.T)[np.tril_indices(q.shape[0])]  # q_i . k_j, j <= i
    assert float(metric(at, "This head: Var(q·k)")) == pytest.approx(causal.var(), rel=5e-3)
    scaled = float(metric(at, "This head: Var(q·k/√d_head)"))
    assert scaled == pytest.approx((causal / np.sqrt(cfg.d_head)).var(), rel=5e-3)
    synthetic = [m.label for m in at.metric if "random vectors" in m.label]
    assert len(synthetic) == 2  # the Gaussian experiment is labelled as such
    text = " ".join(md.value for md in at.markdown)
    assert "random unit-variance vectors (not the model)" in text


def test_merged_caption_describes_the_matrix_shown():
    from inference.runtime import load_shipped

    model = load_shipped(EXPORTED, "softmax")
    if model.weights is None:
        pytest.skip("exported/ has no softmax.safetensors checkpoint")
    at = open_page("merged")
    at.radio(key="model").set_value("softmax").run()
    no_errors(at)
    C, D = model.config.d_model, model.config.d_head
    specs = [el.spec for el in plotly_charts(at)]
    shown = next(s for s in specs if "W_QK of" in s["layout"].get("title", {}).get("text", ""))
    assert _decode(shown["data"][0]["z"]).shape == (C + 1, C + 1)
    captions = " ".join(c.value for c in at.caption)
    assert f"({C} + 1) × ({C} + 1) = {(C + 1) ** 2:,} entries" in captions
    assert "Counted on the model's weight arrays" in captions
    free = sum(
        model.weights[f"blocks.0.attn.{p}_proj.{n}"][:D].size
        for p in "qk"
        for n in ("weight", "bias")
    )
    assert f"{free:,} free parameters" in captions
    per_head = (
        sum(
            model.weights[f"blocks.0.attn.{p}_proj.{n}"][:D].size
            for p in "qkv"
            for n in ("weight", "bias")
        )
        + model.weights["blocks.0.attn.o_proj.weight"][:, :D].size
    )
    assert metric(at, "one head") == f"{per_head:,}"
    assert metric(at, "whole model") == f"{sum(w.size for w in model.weights.values()):,}"


@pytest.mark.parametrize("url_path", PAGES)
def test_empty_sentence_gives_a_hint(url_path):
    at = open_page(url_path)
    at.text_area(key="text").set_value("   ").run()
    no_errors(at)
    assert any("Type a sentence" in i.value for i in at.info)


def test_selection_carries_over_between_pages():
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.text_area(key="text").set_value("the cat sat on the mat .").run()
    at.radio(key="model").set_value("linear").run()
    at.selectbox(key="head").set_value(2).run()
    open_page("scoring", at)
    assert at.text_area(key="text").value == "the cat sat on the mat ."
    assert at.radio(key="model").value == "linear"
    assert at.selectbox(key="head").value == 2
    at.text_area(key="text").set_value("the dogs are in the park .").run()
    open_page("", at)  # the default page: the visualizer
    no_errors(at)
    assert at.text_area(key="text").value == "the dogs are in the park ."
    assert at.radio(key="model").value == "linear"


def test_merged_page_without_weights_says_so(app):
    open_page("merged", app)
    app.radio(key="model").set_value("softmax").run()
    no_errors(app)
    if any("checkpoint" in i.value for i in app.info):
        assert metric(app, "whole model")  # parameter counts need no weights
    else:  # trained models ship their checkpoint
        assert float(metric(app, "max |merged scores")) <= 1e-4


@pytest.mark.parametrize("kind", SHIPPED_KINDS)
def test_merged_page_measures_the_difference(tiny_exports, kind):
    from inference.runtime import load_shipped

    torch_model, folder = tiny_exports[kind]
    model = load_shipped(folder, kind)
    model.weights = {k: v.detach().numpy() for k, v in torch_model.state_dict().items()}
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["uploaded_model"] = model
    at.session_state["model"] = "upload"
    at.run()
    open_page("merged", at)
    no_errors(at)
    assert at.radio(key="model").value == "upload"
    assert int(metric(at, "numerical rank of W_QK")) <= model.config.d_head
    if kind == "delta":  # conv, SiLU and L2 norm after W_Q, W_K: no score check, says why
        assert any("no single matrix" in i.value for i in at.info)
        return
    assert float(metric(at, "max |merged scores")) <= 1e-4
    merged, reference, diff = heatmaps(at)[:3]
    assert np.allclose(merged, reference, atol=1e-4) and diff.max() <= 1e-4


def test_soft_hard_says_what_beta_one_is_and_counts_bits():
    """#20 item 4: on the linear model, β = 1 is not "the model's own attention"; hard
    attention (Xu et al. 2015) samples and is trained with a REINFORCE-style estimator;
    entropy in bits, as in Head statistics (the page's mean at β = 1 equals
    ``head_stats.entropy`` of softmax(QKᵀ/√d) for the softmax model)."""
    from inference import head_stats

    at = open_page("soft-hard")
    cfg, out = _shipped_outputs("softmax", at.text_area(key="text").value)
    layer, head = at.selectbox(key="layer").value, at.selectbox(key="head").value
    bits = head_stats.entropy(out["attn"][layer : layer + 1, head : head + 1])[0, 0]
    assert float(metric(at, "Mean entropy (bits)")) == pytest.approx(bits, abs=2e-3)
    text = " ".join(m.value for m in at.markdown)
    assert "β = 1**: the model's own attention" in text
    assert "REINFORCE" in text and "samples" in text
    at.radio(key="model").set_value("linear").run()
    no_errors(at)
    text = " ".join(m.value for m in at.markdown)
    assert "the model's own attention" not in text and "linear attention" in text


def test_merged_form_axes_read_as_they_are():
    """#20 item 5: W_QK's axes are the dimensions and "bias" (no "0·0 … 128·1"); the
    singular values' log axis writes every tick as a power of ten (no SI prefixes µ n p
    f); the parameter bars are on a linear axis; the parameter count says 3·d_head."""
    at = open_page("merged")
    no_errors(at)
    specs = {}
    for el in plotly_charts(at):
        spec = el.spec
        specs[spec["layout"].get("title", {}).get("text", "")] = spec
    wqk = next(s for t, s in specs.items() if t.startswith("W_QK of"))
    heat = next(t for t in wqk["data"] if t["type"] == "heatmap")
    assert heat["x"][-1] == "bias" and heat["x"][:3] == ["0", "1", "2"]
    assert not any("·" in x for x in heat["x"] + heat["y"])
    for title, s in specs.items():
        if title.startswith("Singular values"):
            assert s["layout"]["yaxis"]["type"] == "log"
            assert s["layout"]["yaxis"]["exponentformat"] == "power", title
    bars = next(s for t, s in specs.items() if t.startswith("Parameters per head"))
    assert bars["layout"]["xaxis"]["type"] == "linear"
    formulas = " ".join(x.value for x in at.latex)
    assert r"3\, d_\text{head}" in formulas and "2 d_" not in formulas
