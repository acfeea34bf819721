"""The Predictions view's bars follow the decoding rule (temperature, top-k, top-p)."""

from __future__ import annotations

import json

import numpy as np

from inference.sampling import Sampling, distribution
from tests.helpers.charts import plotly_charts
from tests.helpers.pages import open_page


def _bars(at) -> tuple[list[str], np.ndarray]:
    spec = next(
        el.spec
        for el in plotly_charts(at)
        if "Next token after" in json.dumps(el.spec["layout"].get("title", {}))
    )
    trace = spec["data"][0]
    x = trace["x"]
    if isinstance(x, dict):  # a typed array
        import base64

        x = np.frombuffer(base64.b64decode(x["bdata"]), dtype=np.dtype(x["dtype"]))
    return trace["y"], np.asarray(x, dtype=float)


def _expected(at, sampling: Sampling) -> np.ndarray:
    """The 8 largest probabilities the sampler draws from at the last position."""
    from ui import loaders

    probs = loaders.get_analysis("softmax", at.text_area(key="text").value).probs[-1]  # (V,)
    dist = distribution(np.log(np.maximum(probs, np.finfo(np.float64).tiny)), sampling)
    return np.sort(dist)[::-1][:8]


def test_temperature_and_top_p_reshape_the_next_token_bars():
    at = open_page("visualizer")
    at.segmented_control(key="view").set_value("predict").run()
    last = at.select_slider(key="pred_pos").options[-1]  # the view opens at T - 2
    at.select_slider(key="pred_pos").set_value(int(last.split(":")[0])).run()
    names, greedy = _bars(at)  # the model's own distribution
    at.radio(key="gen_mode").set_value("sample").run()
    at.slider(key="gen_top_p").set_value(0.5).run()
    assert not at.exception, [e.value for e in at.exception]
    nucleus_names, nucleus = _bars(at)
    np.testing.assert_allclose(nucleus, _expected(at, Sampling(temperature=1.0, top_p=0.5)))
    assert nucleus_names[0] == names[0] and nucleus[0] > greedy[0]  # renormalized on fewer
    at.slider(key="gen_top_p").set_value(1.0).run()
    at.slider(key="gen_temperature").set_value(2.0).run()
    _, hot = _bars(at)
    np.testing.assert_allclose(hot, _expected(at, Sampling(temperature=2.0)))
    assert hot[0] < greedy[0]  # a higher temperature flattens the distribution
