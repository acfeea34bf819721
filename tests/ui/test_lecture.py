"""The lecture path page under AppTest: every step draws its figure and its link, the
step is the URL's, Previous / Next walk the path."""

from __future__ import annotations

import urllib.parse

import pytest
from streamlit.testing.v1 import AppTest

from tests.helpers.pages import APP, open_page
from ui.lecture.story import STEPS


def _charts(at: AppTest) -> int:
    return len(at.get("plotly_chart")) + len(at.get("vega_lite_chart"))


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
    assert any("99" in w.value and "steps 1–10" in w.value for w in at.warning)
    at2 = AppTest.from_file(APP, default_timeout=120)
    at2.query_params["step"] = "4"
    open_page("lecture", at2.run())
    assert at2.header[0].value.startswith("4. ") and not at2.warning
