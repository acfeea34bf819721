"""The lecture path page under AppTest: every step draws its figure and its link, the
step is the URL's, Previous / Next walk the path."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.helpers.pages import open_page
from ui.lecture.story import STEPS


def _charts(at: AppTest) -> int:
    return len(at.get("plotly_chart")) + len(at.get("vega_lite_chart"))


def _links(at: AppTest) -> list:
    return [el.proto for el in at.get("page_link")]


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
        assert any(p.label.startswith("Go deeper") for p in _links(at)), n


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


def test_the_induction_step_links_to_the_best_induction_head():
    from ui import loaders

    at = open_page("lecture")
    at.session_state["step"] = 8
    at.run()
    scores = loaders.get_induction("softmax")  # (L, H)
    layer, head = divmod(int(scores.argmax()), scores.shape[1])
    link = next(p for p in _links(at) if p.label.startswith("Go deeper"))
    assert f"layer={layer}" in link.query_string and f"head={head}" in link.query_string
    assert "view=attention" in link.query_string
