"""The one-query walk-through on the attention view (ui.walkthrough) under AppTest."""

from __future__ import annotations

import numpy as np

from tests.helpers.pages import open_page


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
