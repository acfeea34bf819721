"""The lecture path page under AppTest: every step draws its figure and its link, the
step is the URL's, Previous / Next walk the path."""

from __future__ import annotations

import urllib.parse

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from inference.analysis import analyze
from inference.block import block_numbers, block_outputs
from tests.helpers.charts import plotly_charts
from tests.helpers.pages import APP, open_page
from tests.ui import figure_data as fd
from ui import loaders
from ui.lecture.story import STEPS


def _charts(at: AppTest) -> int:
    return len(plotly_charts(at)) + len(at.get("vega_lite_chart"))


@pytest.fixture(scope="module")
def lecture() -> AppTest:
    return open_page("lecture")


@pytest.mark.parametrize("model", ["softmax", "linear"])
def test_every_step_draws_its_figure_and_links_deeper(lecture, model):
    at = lecture
    at.radio(key="model").set_value(model).run()
    for n, step in enumerate(STEPS, start=1):
        at.session_state["step"] = n
        at.run()
        assert not at.exception, (n, [e.value for e in at.exception])
        assert at.header[0].value == f"{n}. {step.title}"
        assert _charts(at) >= 1, n
        labels = [el.proto.label for el in at.get("page_link")]
        assert any(label.startswith("Go deeper") for label in labels), n


def test_next_and_previous_walk_the_path():
    at = open_page("lecture")
    assert at.header[0].value.startswith("1. ")
    assert at.button(key="lecture_prev_bottom").disabled
    for n in range(2, len(STEPS) + 1):
        at.button(key="lecture_next_bottom").click().run()
        assert at.header[0].value.startswith(f"{n}. "), n
        assert at.query_params["step"] == str(n)
    assert at.button(key="lecture_next_bottom").disabled
    at.button(key="lecture_prev_bottom").click().run()
    assert at.header[0].value.startswith(f"{len(STEPS) - 1}. ")


def test_go_deeper_opens_the_best_induction_head_in_the_visualizer():
    """The step's link carries its state; followed inside the session (the sidebar's
    widgets already hold other values), the visualizer opens in that state."""
    from ui import loaders
    from ui.lecture.model_steps import COPYING

    at = open_page("lecture")
    at.session_state["step"] = 8
    at.run()
    link = next(el.proto for el in at.get("page_link") if el.proto.label.startswith("Go deeper"))
    scores = loaders.get_induction("softmax")  # (L, H)
    layer, head = divmod(int(scores.argmax()), scores.shape[1])
    params = dict(urllib.parse.parse_qsl(link.query_string))
    assert params["follow"] == "1" and params["view"] == "attention"
    assert (params["layer"], params["head"], params["text"]) == (str(layer), str(head), COPYING)
    at.query_params.update(params)
    open_page("visualizer", at)
    assert not at.exception, [e.value for e in at.exception]
    assert (at.selectbox(key="layer").value, at.selectbox(key="head").value) == (layer, head)
    assert at.text_area(key="text").value == COPYING
    assert "follow" not in at.query_params


def test_a_followed_link_adopts_only_known_keys_and_valid_values():
    at = open_page("lecture")
    at.query_params.update(
        {"follow": "1", "model": "gpt5", "layer": "²", "head": "2", "upload_cache": "x"}
    )
    open_page("visualizer", at)
    assert not at.exception, [e.value for e in at.exception]
    assert at.radio(key="model").value == "softmax" and at.selectbox(key="layer").value == 0
    assert at.selectbox(key="head").value == 2
    assert "upload_cache" not in at.session_state or at.session_state["upload_cache"] != "x"


def test_every_step_draws_in_presenter_mode_with_its_points_under_notes():
    at = open_page("lecture")
    at.toggle(key="present").set_value(True).run()
    assert at.query_params["present"] == "1"
    for n in range(1, len(STEPS) + 1):
        at.session_state["step"] = n
        at.run()
        assert not at.exception, (n, [e.value for e in at.exception])
        assert _charts(at) >= 1, n
        assert at.expander[0].label == "Notes", n


def test_a_link_to_a_step_that_is_not_one_says_so_and_opens_step_1():
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["step"] = "99"
    open_page("lecture", at.run())
    assert at.header[0].value.startswith("1. ")
    assert any("99" in w.value and f"steps 1–{len(STEPS)}" in w.value for w in at.warning)
    at2 = AppTest.from_file(APP, default_timeout=120)
    at2.query_params["step"] = "4"
    open_page("lecture", at2.run())
    assert at2.header[0].value.startswith("4. ") and not at2.warning


BLOCK_STEP = next(n for n, s in enumerate(STEPS, start=1) if s.title == "The transformer block")


@pytest.mark.parametrize("model", ["softmax", "linear"])
def test_the_block_step_shows_the_graphs_numbers(model):
    """#21 item 2: the block step of layer 1 draws what attention and the MLP add to each
    token (bars = the norms of the graph's ``blocks.1.attn.out`` / ``mlp.out``), the
    last token's in + attention + MLP = out (row 4 = rows 1-3 summed), and the diagram
    with that token's norm in each of its 8 boxes."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update(step=str(BLOCK_STEP), model=model, layer="1")
    open_page("lecture", at.run())
    assert not at.exception, [e.value for e in at.exception]
    bars, token_sum, flow = (fd.decoded(c.spec) for c in plotly_charts(at))
    sel_text = at.text_area(key="text").value
    shipped = loaders.shipped_model(model)
    result = analyze(shipped, sel_text, recurrent=False)
    nums = block_numbers(block_outputs(shipped, result.ids, 1))
    assert bars["layout"]["title"]["text"].startswith("Block 1")
    np.testing.assert_allclose(bars["data"][0]["y"], nums.norms["attn.out"], rtol=1e-5)
    np.testing.assert_allclose(bars["data"][1]["y"], nums.norms["mlp.out"], rtol=1e-5)
    rows = np.asarray(token_sum["data"][0]["z"])  # (4, C)
    np.testing.assert_allclose(rows[3], rows[:3].sum(0), atol=1e-4)
    np.testing.assert_allclose(rows[0], nums.tensors["resid_pre"][-1], atol=1e-6)
    boxes = [a["text"] for a in flow["layout"]["annotations"] if "‖x‖" in a["text"]]
    assert len(boxes) == 8
    assert f"‖x‖ = {nums.norms['resid_post'][-1]:.2f}" in boxes[-1]
    assert any("max |out − (in + attention + MLP)|" in c.value for c in at.caption)
    share = nums.added_share(result.T - 1)  # the last token's shares, as large metrics
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["attention wrote"] == f"{share['attn.out']:.0%}"
    assert metrics["the MLP wrote"] == f"{share['mlp.out']:.0%}"
    assert token_sum["layout"]["title"]["text"].startswith("Block 1, token “")


def test_step_2_goes_deeper_to_the_encoder_decoder_lesson_s_step_3_at_its_width():
    """#44 item 9: step 2's link opens the encoder-decoder lesson at its step 3 (the page
    scrolls to that header once) with the step's kernel width w in the lesson's slider."""
    at = open_page("lecture")
    at.session_state["step"] = 2
    at.run()
    at.select_slider(key="lecture_nw").set_value(1.0).run()
    link = next(el.proto for el in at.get("page_link") if el.proto.label.startswith("Go deeper"))
    assert "step 3" in link.label and "w = 1" in link.label
    params = dict(urllib.parse.parse_qsl(link.query_string))
    assert params == {"nw_width": "1", "section": "3", "follow": "1"}
    at.query_params.update(params)
    open_page("encoder-decoder", at)
    assert not at.exception, [e.value for e in at.exception]
    assert at.slider(key="nw_width").value == 1.0
    scripts = [el.proto.body for el in at.get("html") if "scrollIntoView" in el.proto.body]
    assert len(scripts) == 1 and '"kernel-regression"' in scripts[0]
    header = next(h for h in at.header if h.value.startswith("3. "))
    assert header.proto.anchor == "kernel-regression"
    at.run()  # a later rerun (the slider moved) does not scroll again
    assert not [el for el in at.get("html") if "scrollIntoView" in el.proto.body]
    assert at.slider(key="nw_width").value == 1.0
