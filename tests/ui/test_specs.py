"""ui.specs: figures are computed once for every session on the shipped models, only for
the view on screen, and an upload's figures stay in its own session."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.helpers import ROOT
from tests.helpers.charts import plotly_charts
from tests.ui.test_upload import digits_onnx, upload  # noqa: F401 - a fixture
from ui import specs
from ui.loaders import UPLOAD_CACHE

TEXT = "the keys to the old cabinet are on the table ."
T_TEXT = len(TEXT.split())  # every word is in the shipped vocabulary: one token each


@pytest.fixture(autouse=True)
def nothing_cached():
    for cache in specs.shared().values():
        cache.clear()


def session(**params) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    for key, value in {"text": TEXT, "model": "linear", **params}.items():
        at.query_params[key] = str(value)
    return at.run()


def cached() -> set:
    return {key for cache in specs.shared().values() for key in cache.keys()}


def test_the_second_student_on_a_sentence_computes_no_figure():
    first = session(view="attention", layer=1, head=2)
    assert not first.exception
    keys = cached()
    figures = {key[0] for key in keys}
    assert figures == {"attention", "head_grid"}  # the view on screen only
    assert all(key[1] == "linear" and key[2] == TEXT for key in keys)
    assert ("attention", "linear", TEXT, (1, 2, "selected head", T_TEXT - 1)) in keys
    second = session(view="attention", layer=1, head=2)
    assert cached() == keys  # nothing new: the same specs, shared
    assert [c.figure_json for c in plotly_charts(second)] == [
        c.figure_json for c in plotly_charts(first)
    ]
    second.selectbox(key="head").set_value(3).run()  # another head: its figure only
    assert {key[0] for key in cached() - keys} == {"attention"}


def test_kept_plotly_specs_are_bytes_the_cyclic_collector_never_walks():
    """Issue #25: hundreds of kept figures (an attention figure at T = 64: 64 ▶ frames of
    dicts and lists) made each full collection 40-70 ms; they are kept encoded."""
    import gc
    import json

    from ui.figures import Encoded

    at = session(view="attention", layer=1, head=2)
    kept = [v for cache in specs.shared().values() for v in cache._values.values()]
    assert kept and all(isinstance(v, Encoded) and not gc.is_tracked(v.json) for v in kept)
    attention = [v for k, v in specs.shared()["per_head"]._values.items() if k[0] == "attention"]
    spec = specs.unpacked(attention[0])
    assert spec["frames"] and spec is not specs.unpacked(attention[0])  # a new copy each use
    sent = [c.spec for c in plotly_charts(at)]
    assert json.loads(json.dumps(spec)) in sent  # the browser gets the figure as it was built
    vega = {"$schema": "vega-lite", "data": {"name": "t"}, "datasets": {"t": b"arrow"}}
    assert specs.packed(vega) is vega  # a Vega-Lite spec with Arrow tables: as it is


def test_the_mean_over_heads_is_one_figure_for_every_head():
    at = session(view="attention", layer=0, head=0)
    at.radio(key="attn_mode").set_value("mean over heads").run()
    before = cached()
    at.selectbox(key="head").set_value(1).run()
    assert cached() == before  # the mean does not depend on the head
    assert ("attention", "linear", TEXT, (0, None, "mean over heads", T_TEXT - 1)) in before


@pytest.mark.slow
def test_an_uploads_figures_stay_in_its_session(digits_onnx):  # noqa: F811
    at = upload(list(digits_onnx.items()))
    assert not at.exception and at.radio(key="model").value == "upload"
    at.text_area(key="text").set_value("12+3=15").run()
    assert not at.exception and plotly_charts(at)
    assert not [key for key in cached() if key[1] == "upload"]
    mine = at.session_state[UPLOAD_CACHE]["specs"]
    assert {key[0] for key in mine} >= {"attention", "head_grid"}
    sizes = at.session_state[UPLOAD_CACHE]["spec_bytes"]  # bounded by bytes (issue #25)
    assert set(sizes) == set(mine) and 0 < sum(sizes.values()) <= specs.UPLOAD_SPEC_BYTES
