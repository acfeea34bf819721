"""#44 item 13: the attention heatmap's text alternative, its numbers as a table under
"Show the numbers" (``ui.numbers``), equal to the heatmap's weights; built only while the
expander is open (a folded table was redrawn by the browser on every rerun)."""

from __future__ import annotations

import base64

import numpy as np

from tests.helpers.charts import plotly_charts
from tests.helpers.pages import open_page
from ui import numbers


def test_the_attention_heatmap_has_its_numbers_as_a_table_once_opened():
    at = open_page("visualizer")
    assert not at.exception
    (box,) = [e for e in at.expander if e.label == numbers.LABEL]
    assert not box.table and box.caption  # folded: its caption, no table sent
    at.session_state[numbers.key_of("attn_big")] = True  # what opening it does
    at.run()
    assert not at.exception
    (box,) = [e for e in at.expander if e.label == numbers.LABEL]
    assert box.proto.expanded
    (table,) = box.table
    shown = table.value  # (T, 1 + T): the query's label, then one column per key
    (chart,) = [c for c in plotly_charts(at) if c.key == "attn_big"]
    heat = chart.spec["data"][0]
    labels = heat["x"]
    assert list(shown.columns[1:]) == labels and list(shown.iloc[:, 0]) == labels
    z, t = heat["z"], len(labels)  # z: a typed array (viz.spec.typed_array)
    weights = np.frombuffer(base64.b64decode(z["bdata"]), dtype=z["dtype"]).reshape(t, t)
    np.testing.assert_allclose(shown.iloc[:, 1:].to_numpy(dtype=float), weights, atol=5e-4)
    at.selectbox(key="head").set_value(1).run()  # it stays open for the next head
    (box,) = [e for e in at.expander if e.label == numbers.LABEL]
    assert box.proto.expanded and box.table


def test_each_compared_heatmap_has_its_numbers():
    at = open_page("visualizer")
    at.segmented_control(key="view").set_value("compare").run()
    assert not at.exception
    charts = {c.key: c for c in plotly_charts(at)}
    assert {"cmp_softmax", "cmp_linear"} <= set(charts)
    for key in ("cmp_softmax", "cmp_linear"):
        at.session_state[numbers.key_of(key)] = True
    at.run()
    assert not at.exception
    boxes = [e for e in at.expander if e.label == numbers.LABEL]
    assert len(boxes) == 2
    for box, key in zip(boxes, ("cmp_softmax", "cmp_linear"), strict=True):
        (table,) = box.table
        assert list(table.value.columns[1:]) == charts[key].spec["data"][0]["x"]
