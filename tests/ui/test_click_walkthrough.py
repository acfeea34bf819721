"""The click layer's selection read back (ui.click) and the one-query walk-through on the
attention view (ui.walkthrough) under AppTest."""

from __future__ import annotations

import numpy as np

from tests.helpers.pages import open_page
from ui.click import clicked_row


def test_the_clicked_row_is_the_clicked_points_customdata():
    assert clicked_row({"click": {"customdata": 7}}) == 7  # ui.chart's trigger value
    assert clicked_row({"click": {"customdata": 7.0}}) == 7
    assert clicked_row({"click": None}) is None  # no click in this run
    assert clicked_row({"click": {"customdata": True}}) is None
    assert clicked_row({"click": {"customdata": "2"}}) is None
    assert clicked_row(None) is None


def test_the_walkthrough_follows_the_query_token_and_ends_on_the_heatmap_row():
    at = open_page("visualizer")
    assert not at.exception
    assert any(s.value.startswith("One query, step by step: query 15") for s in at.subheader)
    at.selectbox(key="query_token").set_value(5).run()
    assert any(s.value.startswith("One query, step by step: query 5") for s in at.subheader)
    (frame,) = [d.value for d in at.dataframe if d.value.columns[0] == "key"]
    weights = frame[frame.columns[-1]].to_numpy(dtype=float)  # (T,)
    assert np.all(weights[6:] == 0) and abs(weights.sum() - 1) < 1e-6
    assert (frame["causal mask (−∞ after the query)"][6:] == "−∞").all()
