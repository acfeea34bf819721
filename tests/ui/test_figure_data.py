"""Every view sends the browser the same figure data as before the figures were rebuilt
as plain specs (issue 11): a recording from the old builders, on two small seeded models.

Record again (only when a change to what is shown is intended) with
``RECORD_FIGURE_DATA=1 python -m pytest tests/ui/test_figure_data.py``.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from bench.apptest import serving
from models.config import SHIPPED_KINDS
from tests.helpers import ROOT
from tests.ui.figure_data import differences, shown
from viz.click import CLICK

RECORDING = Path(__file__).parent / "data" / "figure_data.json.gz"
RECORD = os.environ.get("RECORD_FIGURE_DATA") == "1"
TEXT = "the cat sat on the mat . the dogs are in the park ."
# (model, view, widget key -> value set before the run that is compared)
CASES = [
    (model, view, extra)
    for model in SHIPPED_KINDS
    for view, extra in [
        ("attention", {}),
        ("attention", {"attn_mode": "mean over heads", "query_token": 3}),
        ("attention", {"attn_mode": "max over heads"}),
        ("compare", {}),
        ("shapes", {"qkv_pick": "v"}),
        ("positional", {}),
        ("mask", {"rec_step": 4}),
        ("predict", {"pred_pos": 2}),
        ("stats", {}),
    ]
]
# Not compared: the reshape, redrawn as a flow of boxes on purpose; the one-query
# walk-through and the recurrence's play (#21), new since the recording (the
# walk-through's table's first column is "key").
NOT_COMPARED = ("Multi-head reshape", "weights · V", "After token")
WALKTHROUGH_KEY = "key"


def case_name(model: str, view: str, extra: dict) -> str:
    return f"{model}/{view}" + "".join(f"/{k}={v}" for k, v in sorted(extra.items()))


@pytest.fixture(scope="module")
def folder(tmp_path_factory, tiny_exports):
    """The shipped kinds' small seeded models' graphs in one folder, laid out like exported/."""
    out = tmp_path_factory.mktemp("figure_data")
    for kind in SHIPPED_KINDS:
        _model, src = tiny_exports[kind]
        for path in src.glob("*.onnx"):
            shutil.copy(path, out / path.name)
    return out


def run_case(model: str, view: str, extra: dict) -> dict:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    for key, value in {"text": TEXT, "model": model, "view": view, "layer": 1, "head": 1}.items():
        at.query_params[key] = str(value)
    at.run()
    for key, value in extra.items():
        widget = at.get("radio") + at.get("selectbox") + at.get("slider") + at.get("select_slider")
        (match,) = [w for w in widget if w.key == key]
        match.set_value(value)
    if extra:
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    data = shown(at)
    data["plotly"] = [
        fig
        for fig in data["plotly"]
        if not fig["layout"].get("title", {}).get("text", "").startswith(NOT_COMPARED)
    ]
    for fig in data["plotly"]:  # the click layer and play (#21) are new: the rest is compared
        fig["data"] = [trace for trace in fig["data"] if trace.get("name") != CLICK]
        for trace in fig["data"]:  # clickable bars (#21): a key's bar picks it as the query
            if trace.get("type") == "bar":
                trace.pop("customdata", None)
                trace.pop("unselected", None)
        fig.pop("frames", None)
        fig.pop("heads", None)  # the layer's other heads, drawn at once when picked (#19)
        fig["layout"].pop("updatemenus", None)
        for key in [
            k for k, v in fig["layout"].items() if isinstance(v, dict) and "overlaying" in v
        ]:
            del fig["layout"][key]  # the click layer's own axes (viz.click)
    data["tables"] = [t for t in data["tables"] if t["columns"][0] != WALKTHROUGH_KEY]
    return data


@pytest.mark.slow
def test_every_view_shows_the_recorded_figure_data(folder):
    with serving(folder):
        now = {case_name(*case): run_case(*case) for case in CASES}
    if RECORD:
        RECORDING.parent.mkdir(exist_ok=True)
        RECORDING.write_bytes(gzip.compress(json.dumps(now, sort_keys=True).encode(), mtime=0))
    recorded = json.loads(gzip.decompress(RECORDING.read_bytes()))
    assert set(recorded) == set(now)
    for name in recorded:
        assert recorded[name]["plotly"] or recorded[name]["vega_lite"] or recorded[name]["tables"]
        diff = differences(recorded[name], now[name], name)
        assert not diff, "\n".join(diff[:20])
