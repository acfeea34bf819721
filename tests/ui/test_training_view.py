"""The Training history view and its lecture step (issue #46) under AppTest: the curves
are the history's, the three heatmaps are each checkpoint's own attention graph on the
sidebar's sentence, and the step slider redraws them."""

from __future__ import annotations

import numpy as np
from streamlit.testing.v1 import AppTest

from inference.history import HistoryGraph, load_history
from tests.helpers import EXPORTED
from tests.helpers.charts import plotly_charts
from tests.helpers.pages import APP, open_page
from tests.ui.test_app import decode
from ui import loaders

KINDS = ("softmax", "linear", "delta")


def _app(**params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    for key, value in params.items():
        at.query_params[key] = str(value)
    return at.run()


def _z(at: AppTest, kind: str) -> np.ndarray:
    chart = next(c for c in plotly_charts(at) if c.key == f"history_{kind}")
    return decode(next(t for t in chart.spec["data"] if t["type"] == "heatmap")["z"])


def _ids(text: str) -> list[int]:
    return list(loaders.get_analysis("softmax", text).ids)


def test_the_view_draws_each_checkpoints_own_attention_and_the_slider_redraws_it():
    _, models = load_history(EXPORTED / "history")
    at = _app(view="training", layer=1, head=2)
    assert not at.exception, [e.value for e in at.exception]
    keys = [c.key for c in plotly_charts(at)]
    assert keys[:4] == ["history_curves", "history_softmax", "history_linear", "history_delta"]
    curves = next(c for c in plotly_charts(at) if c.key == "history_curves").spec
    softmax = [t for t in curves["data"] if t["name"] == "softmax"]
    assert softmax[0]["customdata"] == models["softmax"].steps  # the real steps
    step = at.select_slider(key="history_step").value
    assert step == models["softmax"].phase_change_step  # the slider opens on the phase change
    ids = _ids(at.text_area[0].value if at.text_area else at.text_input[0].value)
    for kind in KINDS:
        want = HistoryGraph(models[kind].graph_path(step)).attention(ids)[1, 2]  # (T, T)
        np.testing.assert_allclose(_z(at, kind), want, atol=1e-6)
    before = _z(at, "softmax")
    at.select_slider(key="history_step").set_value(models["softmax"].graph_steps[0]).run()
    assert not at.exception
    after = _z(at, "softmax")
    first = HistoryGraph(models["softmax"].graph_path(models["softmax"].graph_steps[0]))
    np.testing.assert_allclose(after, first.attention(ids)[1, 2], atol=1e-6)
    assert np.abs(after - before).max() > 0.1  # the initialisation looks elsewhere
    said = " ".join(c.value for c in at.caption)
    assert "One recipe for the three" in said and "no head reaches 0.4" in said


def test_the_lecture_step_draws_the_curves_and_the_best_head():
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params.update({"step": "10"})
    at = open_page("lecture", at.run())
    assert not at.exception, [e.value for e in at.exception]
    assert at.header[0].value == "10. Watch an induction head form"
    keys = [c.key for c in plotly_charts(at)]
    assert "lecture_history" in keys and "history_softmax" in keys
    heads = [m.value for m in at.markdown if m.value.startswith("**L")]
    _, models = load_history(EXPORTED / "history")
    last = models["softmax"].prefix_matching[-1]
    layer, head = divmod(int(np.argmax(last)), last.shape[1])
    assert heads and heads[0].startswith(f"**L{layer} H{head} at step")


def test_a_link_opens_the_slider_on_its_step_and_a_wrong_step_gets_one_line():
    at = _app(view="training", history_step=450)
    assert not at.exception and at.select_slider(key="history_step").value == 450
    at = _app(view="training", history_step=451)
    assert not at.exception
    lines = [w.value.replace("\\", "") for w in at.warning if "link's history" in w.value]
    assert len(lines) == 1 and lines[0].startswith("Ignored the link's history_step=451")
    assert at.select_slider(key="history_step").value == 1300  # its default, the phase change
