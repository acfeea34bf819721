"""The benchmark code runs at tiny sizes on real onnxruntime sessions (no timing asserts)."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import pytest
from PIL import Image

from bench.__main__ import README, RESULTS, main
from bench.common import BENCH_KINDS as SHIPPED_KINDS
from bench.common import speed_probe_ms
from bench.plots import figure_png
from bench.report import (
    END,
    START,
    between_markers,
    readme_section,
    render,
    replace_between_markers,
    update_readme,
)
from bench.sections.isolation import isolation as isolation_rows
from bench.suite import run
from ui.visualizer import VIEWS

SECTIONS_WITHOUT_APP = ("latency", "inference", "scaling", "generation", "memory")


@pytest.mark.slow
def test_quick_suite_writes_results_plots_and_summary(tiny_folder, tmp_path):
    results = run(tmp_path, SECTIONS_WITHOUT_APP, quick=True, folder=tiny_folder, log=lambda _: 0)
    saved = json.loads((tmp_path / "results.json").read_text())
    assert set(SECTIONS_WITHOUT_APP) <= set(saved)
    assert saved["machine"]["provider_active"] in saved["machine"]["providers_available"]
    assert saved["quick"] is True
    assert saved["inference"]["softmax"]["weights"].startswith("checkpoint")
    assert saved["inference"]["linear"]["max_abs_diff"] < 1e-4
    assert saved["scaling"]["linear"]["slope"] is not None
    assert saved["scaling"]["delta"]["slope"] is not None  # DeltaNet measured where it belongs
    assert saved["inference"]["delta"]["max_abs_diff"] < 1e-4
    lo, hi = saved["scaling"]["ratio_p10_p90"]
    assert 0 < lo <= hi
    assert len(saved["scaling"]["softmax"]["peak_mb"]) == len(saved["scaling"]["softmax"]["T"])
    row = saved["latency"]["linear"]["8"]
    assert row["total"]["median_ms"] >= row["arrays"]["median_ms"] > 0
    assert list(row["views_ms"]) == list(VIEWS)  # every view of the app, in its order
    assert row["total"]["median_ms"] >= max(row["views_ms"].values()) > 0
    rerun = saved["latency"]["rerun"]  # the app's reruns: 2 layers x 2 heads, 1 sentence
    assert set(rerun["linear"]) == set(rerun["softmax"]) == set(VIEWS)
    for view in VIEWS:
        r = rerun["linear"][view]
        assert (r["new_sentence"]["n"], r["cold"]["n"], r["warm"]["n"]) == (1, 3, 4)
        assert 0 < r["warm"]["median_ms"] and 0 < r["cold"]["median_ms"]
    assert rerun["target_ms"] == 50.0 and isinstance(rerun["met"], bool)
    assert saved["inference"]["linear"]["comparison"] == "onnxruntime CPU vs PyTorch CPU"
    gen = saved["generation"]
    assert gen["kv_matches_recompute_tokens"]
    assert set(gen["baselines"]) == {"speedup_vs_recompute", "speedup_vs_kv_cache"}
    mem = saved["memory"]
    assert len(set(mem["state_bytes"])) == 1  # the recurrent state never grows
    assert mem["kv_cache_bytes"][1] > mem["kv_cache_bytes"][0]
    for name in ("scaling_time", "generation_speed", "carried_memory"):
        assert Image.open(tmp_path / f"{name}.png").size[0] > 0
        assert not (tmp_path / f"{name}.html").exists()  # no page that fetches plotly.js
    summary = (tmp_path / "summary.md").read_text()
    assert "| Benchmark | Target | Measured | Met |" in summary and "Quick run" in summary
    assert "(analytic)" in summary and "naive" in summary
    assert "| Delta (DeltaNet) fast graph, log-log slope, T = 16..64 | <= " in summary
    assert "(eager), delta, T = 8 |" in summary
    assert "| Rerun after a layer/head change, warm cache (head seen before), linear, T = 8 |" in (
        summary
    )
    assert "| New sentence to the view on screen (rerun), softmax, T = 8 |" in summary
    assert results["latency"]["softmax"]
    assert sorted(saved["plots"]) == sorted(p.name for p in tmp_path.glob("*.png"))


@pytest.mark.slow
def test_cli_runs_a_subset(tiny_folder, tmp_path, capsys):
    main(
        [
            "--quick",
            "--only",
            "scaling,memory",
            "--models",
            str(tiny_folder),
            "--out",
            str(tmp_path),
        ]
    )
    saved = json.loads((tmp_path / "results.json").read_text())
    assert "scaling" in saved and "memory" in saved and "latency" not in saved
    assert "Carried memory" in capsys.readouterr().out


def test_a_plot_failure_is_recorded_after_the_summary(tiny_folder, tmp_path, monkeypatch):
    def no_chromium(results, out):
        assert (out / "summary.md").exists()  # the numbers are safe before any plotting
        raise RuntimeError("kaleido needs a Chromium browser")

    monkeypatch.setattr("bench.plots.write_plots", no_chromium)
    run(tmp_path, ("memory",), quick=True, folder=tiny_folder, log=lambda _: 0)
    saved = json.loads((tmp_path / "results.json").read_text())
    assert "Chromium" in saved["plots_error"] and "plots" not in saved
    assert "Plots were not written" in (tmp_path / "summary.md").read_text()


@pytest.mark.slow
def test_isolation_section_runs_and_renders(tiny_folder, tmp_path, monkeypatch):
    monkeypatch.setattr("upload.isolated.ANALYSIS_TIMEOUT_S", 2.0)  # the slow graph's wait
    run(tmp_path, ("isolation",), quick=True, folder=tiny_folder, log=lambda _: 0)
    iso = json.loads((tmp_path / "results.json").read_text())["isolation"]
    assert {"start", "analysis", "hostile", "cpu", "date", "seconds"} <= set(iso)
    start = iso["start"]
    assert start["process"]["n"] == start["process_and_open"]["n"] == start["forked"]["n"] == 1
    assert start["zygote_first_ms"] > 0
    assert "forked by the zygote" in isolation_rows({"start": start}, {})[0][2]
    for kind in SHIPPED_KINDS:
        s = iso["analysis"][kind]
        assert s["worker"]["n"] == s["in_process"]["n"] == s["in_process_1_thread"]["n"] == 2
        assert s["max_abs_diff"] < 1e-4  # the worker computed the same analysis
        assert "added_ms" in s and "added_ms_vs_1_thread" in s
    assert iso["analysis"]["linear"]["files"] == ["linear.inspect.onnx", "linear.step.onnx"]
    hostile = iso["hostile"]
    assert len(hostile["cases"]) == 5 and hostile["all_refused_one_line"], hostile["cases"]
    stages = [c["stage"] for c in hostile["cases"]]
    assert stages == ["upload", "analysis at T = 5", "analysis at T = 6", "upload", "upload"]
    assert hostile["peak_rss_growth_mb"] is None or hostile["peak_rss_growth_mb"] >= 0
    summary = (tmp_path / "summary.md").read_text()
    for row in (
        "| Upload worker start, median of 1",
        "| Added cost of one analysis through the worker, softmax, T = 8 | median <= 30 ms",
        "| Added cost of one analysis through the worker, linear, T = 8 |",
        "| Hostile uploads (5) refused, each with one line | 5 of 5 | 5 of 5 | yes |",
        "| Peak server RSS growth during the hostile suite | reported |",
    ):
        assert row in summary, summary
    # the slow graph is stopped either way: by its CPU budget, or, on a machine other jobs
    # keep busy, by the wall-clock cap on waiting for a CPU (upload/deadline.py)
    assert (
        "stopped: it took longer than 2 s" in summary
        or "too busy to give it 2 s of CPU time" in summary
    ), summary


def test_readme_benchmark_section_is_rendered_from_committed_results():
    results = json.loads((RESULTS / "results.json").read_text())
    assert between_markers(README.read_text()) == readme_section(results)
    assert (RESULTS / "summary.md").read_text() == render(results)


def test_update_readme_rewrites_only_the_marked_section(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"# Title\n\n{START}\nold table\n{END}\n\n## After\n")
    results = {
        "machine": {"cpu": "X"},
        "memory": {"length": [4], "state_bytes": [8], "kv_cache_bytes": [16]},
    }
    update_readme(readme, results)
    text = readme.read_text()
    assert text.startswith("# Title\n\n" + START) and text.endswith(END + "\n\n## After\n")
    assert "old table" not in text and between_markers(text) == readme_section(results)
    update_readme(readme, results)
    assert readme.read_text() == text  # idempotent
    with pytest.raises(ValueError):
        replace_between_markers("no markers", "x")


def test_cli_rejects_unknown_sections(tmp_path):
    with pytest.raises(SystemExit):
        main(["--quick", "--only", "latency,nope", "--out", str(tmp_path)])


@pytest.mark.slow
def test_png_and_report_render(tmp_path):
    fig = go.Figure(go.Scatter(x=[1, 10, 100], y=[1, 20, 400]))
    img = Image.open(figure_png(fig, tmp_path / "p.png"))
    assert img.size == (900, 560)
    assert len(np.unique(np.asarray(img.convert("L")))) > 2  # something drawn, not a blank page
    md = render({"machine": {"cpu": "X"}, "scaling": {}})
    assert md.startswith("Measured") and "| Benchmark |" in md


def test_the_machine_line_gives_the_speed_probe():
    """Wall-clock rows move with the machine's speed (a shared host): the line above the
    table says how fast the probe loop ran at the start and the end of the run."""
    md = render(
        {"machine": {"cpu": "X", "speed_probe_ms_start": 88.4, "speed_probe_ms_end": 171.0}}
    )
    assert "Speed probe" in md.splitlines()[0] and "88 ms at the start, 171 ms at the end" in md
    assert "Speed probe" not in render({"machine": {"cpu": "X"}})
    assert 0 < speed_probe_ms() < 10_000
