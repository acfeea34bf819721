"""The README table, ``--merge``, ``--set`` and the client's decoding."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest
from streamlit.proto.Element_pb2 import Element

from bench.__main__ import main, parse_sizes
from bench.report import render
from bench.stwidgets import plotly_array, widget_of
from bench.suite import Sizes, run

MEMORY = {"length": [4], "state_bytes": [8], "kv_cache_bytes": [16]}


def concurrency_data(sessions: int, reruns: int, median: float, method: str | None = None):
    data = {
        "sessions": sessions,
        "reruns": reruns,
        "wrong_results": 0,
        "errors": [],
        "latency": {"median_ms": median, "p95_ms": 2 * median},
        "throughput_per_s": 7.0,
        "single_session": {"model": "softmax", "latency": {"median_ms": 90.0, "p95_ms": 99.0}},
        "growth_mb": 3.0,
        "target_growth_mb": 50.0,
    }
    return data | ({"method": method} if method else {})


def test_the_table_has_target_measured_and_met_for_each_row():
    data = {"machine": {"date": "now"}, "concurrency": concurrency_data(30, 1000, 450.0, "real")}
    table = render(data)
    assert "| Benchmark | Target | Measured | Met |" in table
    row = next(
        line for line in table.splitlines() if line.startswith("| 30 sessions at once: rerun")
    )
    assert "median 450.0 ms" in row and row.count(" | ") == 3
    assert "Concurrency: real." in table  # how it was measured, under the table


@pytest.mark.slow
def test_merge_keeps_the_other_sections(tiny_folder, tmp_path, monkeypatch):
    monkeypatch.setattr("bench.plots.write_plots", lambda results, out: [])  # kaleido: elsewhere
    quiet = {"log": lambda _: 0, "quick": True, "folder": tiny_folder}
    run(tmp_path, ("scaling",), **quiet)
    first = json.loads((tmp_path / "results.json").read_text())
    run(tmp_path, ("latency",), merge=True, **quiet)
    merged = json.loads((tmp_path / "results.json").read_text())
    assert merged["scaling"] == first["scaling"] and "latency" in merged
    assert set(merged["carried_over"]) == {"scaling"}
    summary = (tmp_path / "summary.md").read_text()
    assert "Carried over from earlier runs with `--merge`, not rerun: scaling" in summary
    run(tmp_path, ("scaling",), **quiet)  # no merge: scaling only
    assert "latency" not in json.loads((tmp_path / "results.json").read_text())
    with pytest.raises(ValueError, match="cannot merge full results"):
        run(tmp_path, ("scaling",), quick=False, folder=tiny_folder, log=lambda _: 0, merge=True)


def test_sizes_from_the_command_line():
    assert parse_sizes("sessions=10, latency_T=8/32", Sizes()) == {
        "sessions": 10,
        "latency_T": (8, 32),
    }
    assert parse_sizes("scaling_budget_s=0.5", Sizes()) == {"scaling_budget_s": 0.5}
    for bad in ("nope=1", "sessions", "sessions=ten"):
        with pytest.raises(ValueError):
            parse_sizes(bad, Sizes())
    with pytest.raises(SystemExit):
        main(["--quick", "--set", "nope=1"])


def test_repeated_widgets_are_read_with_their_defaults():
    """A multiselect's default indices and a slider's values are lists (a page with them,
    another view, is read; the client does not set them)."""
    el = Element()
    el.multiselect.id, el.multiselect.label = "$$ID-abc-dims", "Dimensions"
    el.multiselect.options.extend(["0", "1", "2"])
    el.multiselect.default.extend([0, 2])
    assert widget_of(el).value == ["0", "2"]
    el = Element()
    el.slider.id, el.slider.label = "$$ID-abc-rec_step", "Step"
    el.slider.default.extend([4.0])
    assert widget_of(el).value == [4.0]


def test_widgets_are_read_from_element_protos():
    el = Element()
    el.selectbox.id, el.selectbox.label = "$$ID-abc-example", "Example"
    el.selectbox.options.extend(["a", "b"])
    w = widget_of(el)
    assert (w.kind, w.key, w.value) == ("selectbox", "example", None)  # index=None: unset
    el.selectbox.default = 1
    assert widget_of(el).value == "b"
    el.selectbox.raw_value, el.selectbox.set_value = "a", True
    assert widget_of(el).value == "a"  # the server's value wins over the default
    assert widget_of(el).state("b").string_value == "b"
    group = Element()
    group.button_group.id, group.button_group.label = "$$ID-x-view", "View"
    for text in ("one", "two"):
        group.button_group.options.add().content = text
    group.button_group.default.append(1)
    assert widget_of(group).value == ["two"]
    assert list(widget_of(group).state("one").string_array_value.data) == ["one"]
    heading = Element()
    heading.heading.body = "Title"
    assert widget_of(heading) is None


def test_plotly_arrays_typed_and_plain():
    z = np.arange(6, dtype="f4").reshape(2, 3)
    typed = {"dtype": "f4", "bdata": base64.b64encode(z.tobytes()).decode(), "shape": "2, 3"}
    np.testing.assert_array_equal(plotly_array(typed), z)
    plain = plotly_array([[0.5, None], [1.0, 0.25]])
    assert np.isnan(plain[0, 1]) and plain[1, 1] == 0.25
