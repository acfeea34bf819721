"""The complexity lesson page under AppTest: renders, Measure draws the figures, and
one measurement is shown to every session."""

from __future__ import annotations

import json
import time

import pytest
from streamlit.testing.v1 import AppTest

from tests.helpers.charts import plotly_charts
from tests.helpers.pages import open_page
from ui import complexity_shipped
from ui.complexity import COMPARED, Measured, memory_note, shared


def _app() -> AppTest:
    return AppTest.from_string("from ui.complexity import page\npage()\n", default_timeout=300)


@pytest.fixture(autouse=True)
def nothing_measured():
    """Every test starts on a server that has measured nothing (the store is per process)."""
    shared().results.clear()
    yield
    shared().results.clear()


def no_errors(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def test_page_opens_with_the_bench_s_measured_curves_without_measuring():
    """#44 item 10: the page opens with numbers, the bench's shipped results.json (its
    slopes, ratio and generation speed-ups on screen), and Measure is kept for a live run."""
    bench = json.loads(complexity_shipped.RESULTS.read_text())
    at = _app().run()
    no_errors(at)
    assert at.title[0].value == "Complexity, measured live"
    assert at.button(key="cx_measure").label == "Measure"
    assert not shared().results  # nothing was measured on this server
    assert not any("Nothing measured yet" in i.value for i in at.info)
    specs = _specs(at)
    assert {"Time vs length", "Generation speed"} <= specs.keys()
    times = [t for t in specs["Time vs length"]["data"] if t["name"].startswith("softmax")]
    assert times[0]["x"] == bench["scaling"]["softmax"]["T"]
    text = " ".join(md.value for md in at.markdown)
    assert f"softmax **{bench['scaling']['softmax']['slope']:.2f}**" in text
    speedup = bench["generation"]["speedup_vs_recompute"]
    assert f"{speedup:.1f}× faster" in text
    assert any("Measured by the bench" in c.value for c in at.caption)


def test_without_the_bench_s_file_the_page_asks_for_a_measurement(tmp_path, monkeypatch):
    monkeypatch.setattr(complexity_shipped, "RESULTS", tmp_path / "results.json")
    monkeypatch.setattr(complexity_shipped.load, "__defaults__", (tmp_path / "results.json",))
    at = _app().run()
    no_errors(at)
    assert not plotly_charts(at)
    assert any("Nothing measured yet" in i.value for i in at.info)
    (tmp_path / "results.json").write_text('{"machine": {}, "scaling": {"softmax": {}}}')
    at.run()  # a file without both models' scaling is not drawn either
    no_errors(at)
    assert not plotly_charts(at)


def _titles(at: AppTest) -> list[str]:
    specs = [el.spec for el in plotly_charts(at)]
    return [s["layout"]["title"]["text"] for s in specs]


def _small(at: AppTest) -> AppTest:
    at.select_slider(key="cx_max_T").set_value(256)
    at.select_slider(key="cx_new").set_value(32)
    return at


def _specs(at: AppTest) -> dict:
    return {s["layout"]["title"]["text"]: s for s in (el.spec for el in plotly_charts(at))}


@pytest.mark.slow
def test_measure_shows_loglog_and_generation_figures():
    at = _small(_app().run())
    at.button(key="cx_measure").click().run()
    no_errors(at)
    specs = _specs(at)
    time_fig = specs["Time vs length"]
    assert time_fig["layout"]["xaxis"]["type"] == "log"
    names = [t["name"] for t in time_fig["data"]]
    assert any(n.startswith("fit: slope") for n in names)
    assert "Generation speed" in specs
    assert len(specs) in (3, 4)
    sc = shared().results[(256, 32)].results["scaling"]
    for kind in COMPARED:
        assert sc[kind]["T"] == [64, 128, 256]
        assert all(ms > 0 for ms in sc[kind]["median_ms"])
        assert all(m is None or m >= 0 for m in sc[kind]["peak_mb"])
    # #20 item 3: the first Measure of a fresh server draws the memory chart (Linux /proc)
    assert memory_note(sc) is None, memory_note(sc)
    assert len(specs) == 4
    mem = specs["Memory vs length"]
    ys = [y for t in mem["data"] if not t["name"].startswith("fit") for y in t["y"]]
    assert len(ys) == 6 and all(y > 0 for y in ys)
    # the figures keep viz.style's projector fonts (ui.chart applies no theme)
    assert all(c.spec["layout"]["font"]["size"] >= 14 for c in plotly_charts(at))
    text = " ".join(md.value for md in at.markdown)
    assert "recomputing the prefix" in text and "key/value cache" in text
    assert "Baseline" in text
    assert "Over the longest doubling** (T = 128 → 256)" in text and "Memory slopes" in text
    at.run()  # a plain rerun keeps the results without measuring again
    assert len(plotly_charts(at)) == len(specs)
    assert shared().results[(256, 32)].results["scaling"] is sc


@pytest.mark.slow  # over 4 s in a full fast run (5-8 s; 9-19 s beside two busy loops)
def test_one_measurement_is_shown_to_every_session_and_measure_again_repeats_it():
    first = _small(_app().run())
    first.button(key="cx_measure").click().run()
    measured = shared().results[(256, 32)]
    other = _small(_app().run()).run()  # another student opens the page: nothing to press
    no_errors(other)
    assert _specs(other).keys() == _specs(first).keys() and len(_specs(other)) >= 3
    assert other.button(key="cx_measure").label == "Measure again"
    assert any("once for every session" in c.value for c in other.caption)
    assert shared().results[(256, 32)] is measured  # opening the page measured nothing
    other.button(key="cx_measure").click().run()
    no_errors(other)
    again = shared().results[(256, 32)]
    assert again is not measured and again.when > measured.when
    first.run()  # the first session now shows the new measurement
    assert _specs(first).keys() == _specs(other).keys()


def test_a_measurement_finished_while_waiting_is_not_repeated():
    store = shared()
    done = Measured(_results({"softmax": [1.0, 2.0], "linear": [1.0, 2.0]}), time.time())
    store.results[(256, 32)] = done
    assert store.measure(256, 32, pressed=done.when - 5.0) is done  # pressed before it ended


def _results(peaks: dict) -> dict:
    rows = {
        k: {"T": [64, 128], "median_ms": [1.0, 2.0], "p95_ms": [1.0, 2.0], "peak_mb": p}
        for k, p in peaks.items()
    }
    for r in rows.values():
        r["slope"], r["memory_slope"] = 1.0, None
    scaling = {**rows, "ratio_T": 128, "ratio": 1.5}
    return {"scaling": scaling, "generation_missing": "test", "provider": "CPU"}


def _show(results: dict) -> None:
    """Put ``results`` in the server's store as the page's default sizes' measurement."""
    shared().results[(2048, 128)] = Measured(results, time.time())


def test_zero_memory_growth_is_not_called_a_platform_gap():
    at = _app()
    _show(_results({"softmax": [3.0, 0.0], "linear": [0.0, 1.0]}))
    at.run()
    no_errors(at)
    info = " ".join(i.value for i in at.info)
    assert "No memory growth measured (softmax at T = 128, linear at T = 64)" in info
    assert "high-water mark" in info and "Linux" not in info
    assert "Memory vs length" not in _titles(at)


def test_missing_memory_reading_says_linux_only_and_positive_peaks_are_drawn():
    at = _app()
    _show(_results({"softmax": [3.0, None], "linear": [1.0, 1.0]}))
    at.run()
    assert any("only measured on Linux" in i.value for i in at.info)
    _show(_results({"softmax": [3.0, 9.0], "linear": [1.0, 1.0]}))
    at.run()
    no_errors(at)
    assert "Memory vs length" in _titles(at)
    assert not any("memory" in i.value.lower() for i in at.info)


def test_app_opens_the_page_at_its_url_path():
    """app.py's navigation serves the complexity page at /complexity: switching to the
    page registered there renders this page (its title and Measure button), not the
    visualizer that the app opens by default."""
    at = open_page("complexity")
    no_errors(at)
    assert [t.value for t in at.title] == ["Complexity, measured live"]
    assert at.button(key="cx_measure")


def test_a_poor_fit_and_a_busy_machine_are_said():
    """#20 item 3: warnings beside the slopes when the fit is poor or the machine busy."""
    results = _results({"softmax": [3.0, 9.0], "linear": [1.0, 2.0]})
    results["scaling"]["softmax"]["fit_r2"] = 0.7
    results["scaling"]["load_per_core"] = 2.5
    _show(results)
    at = _app().run()
    no_errors(at)
    warnings = [w.value for w in at.warning]
    assert any("softmax fit is poor (R² 0.70)" in w for w in warnings), warnings
    assert any("busy" in w and "2.5 per core" in w for w in warnings), warnings
    _show(_results({"softmax": [3.0, 9.0], "linear": [1.0, 2.0]}))
    quiet = [w.value for w in _app().run().warning]  # a good fit on a quiet machine
    assert not [w for w in quiet if "fit" in w or "busy" in w], quiet
