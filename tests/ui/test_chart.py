"""ui.chart: one element per keyed chart whatever its figure, and the payload it gets."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from bench.common import CHART
from tests.helpers.charts import plotly_charts
from ui import chart
from ui.figures import PLOT_CONFIG, encode

SPEC = {"data": [{"type": "heatmap", "z": [[0.25, 0.75]]}], "layout": {"height": 300}}


def test_the_payload_holds_the_figure_as_it_was_encoded():
    sent = chart.payload(encode(SPEC).json, PLOT_CONFIG, clicks=True, instant=False)
    payload = json.loads(sent)
    assert payload["figure"] == SPEC and payload["config"] == PLOT_CONFIG
    assert payload["clicks"] is True and payload["instant"] is False
    assert (chart._STATIC_JS / payload["chunk"]).is_file()
    assert encode(SPEC).json in sent  # spliced in, not encoded again


def test_the_bench_reads_the_apps_charts_by_their_component_name():
    assert CHART == chart.COMPONENT


def _app():
    import streamlit as st

    from ui.figures import plot

    head = st.session_state.get("head", 0)
    z = [[0.1 * head, 1.0]]
    plot({"data": [{"type": "heatmap", "z": z}], "layout": {"title": f"head {head}"}}, key="big")
    plot({"data": [{"type": "bar", "y": z[0]}], "layout": {}})


def test_a_keyed_chart_is_the_same_element_whatever_its_figure():
    """The point of ui.chart: Streamlit's own chart got a new id (a new element, drawn
    from scratch two or three times) for every new figure; a keyed chart here keeps its
    id, so the browser's element stays and draws the new figure once."""
    at = AppTest.from_function(_app).run()
    ids = [el.proto.id for el in at.get("bidi_component")]
    at.session_state["head"] = 3
    at.run()
    assert [el.proto.id for el in at.get("bidi_component")][0] == ids[0]
    shown = plotly_charts(at)
    assert shown[0].key == "big" and shown[0].spec["layout"]["title"] == "head 3"
    assert shown[1].key is None and shown[1].spec["data"][0]["y"] == pytest.approx([0.3, 1.0])


def test_a_click_is_read_from_the_charts_state():
    assert chart.clicked({"click": {"customdata": 4}}) == 4  # the trigger value
    assert chart.clicked({"click": {"customdata": 7.0}}) == 7
    assert chart.clicked({"click": None}) is None  # no click in this run
    assert chart.clicked(None) is None
    assert chart.clicked({"click": {"customdata": True}}) is None
    assert chart.clicked({"click": {"customdata": "2"}}) is None
