"""viz.present: presenter mode's layout on the same traces."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from viz import attention, present
from viz.spec import wired


def _causal(t: int) -> np.ndarray:
    w = np.tril(np.ones((t, t)))
    return w / w.sum(1, keepdims=True)


def test_a_token_heatmap_gets_20px_text_a_row_per_token_and_the_same_traces():
    t = 16
    spec = wired(attention.attention_heatmap(_causal(t), [f"w{i}" for i in range(t)]))
    big = present.enlarged(spec)
    for new, old in zip(big["data"], spec["data"], strict=True):  # arrays never copied
        assert new is old or all(new[k] is old[k] for k in old if k != "colorbar")
    layout = big["layout"]
    assert layout["font"]["size"] >= 20 and layout["hoverlabel"]["font"]["size"] >= 20
    assert layout["xaxis"]["tickfont"]["size"] >= 20 and layout["yaxis"]["tickfont"]["size"] >= 20
    assert layout["height"] == present.ROW_PX * t + present.FRAME_PX
    assert spec["layout"]["font"]["size"] < 20  # the cached spec is untouched
    go.Figure(big)  # a valid plotly figure


def test_every_token_is_labelled_up_to_40_and_thinned_after():
    forty = present.enlarged(wired(attention.attention_heatmap(_causal(40), ["a"] * 40)))
    axis = forty["layout"]["yaxis"]  # one label per token: dtick 1, or all 40 as tickvals
    assert "nticks" not in axis and (axis.get("dtick") == 1 or len(axis["tickvals"]) == 40)
    many = wired(attention.attention_heatmap(_causal(60), ["a"] * 60))
    assert present.enlarged(many)["layout"]["yaxis"].get("nticks") == many["layout"]["yaxis"].get(
        "nticks"
    )


def test_other_figures_only_get_larger_text():
    spec = wired(attention.attention_with_row(_causal(8), list("abcdefgh"), 3))
    big = present.enlarged(spec)
    assert present.token_rows(spec) is None  # heatmap and bars: heights kept
    assert big["layout"]["height"] == spec["layout"]["height"]
    assert all(a["font"]["size"] >= 20 for a in big["layout"]["annotations"])


def test_colour_bars_leave_the_axis_titles_room():
    """A lone bar above the plot turns upright at the right; bars under the plots move to
    the figure's bottom edge with their titles under them; the cached spec keeps its own."""
    t = 16
    spec = wired(attention.attention_heatmap(_causal(t), [f"w{i}" for i in range(t)], width_px=200))
    assert spec["data"][0]["colorbar"]["orientation"] == "h"  # beside another figure: above
    bar = present.enlarged(spec)["data"][0]["colorbar"]
    assert "orientation" not in bar and bar["title"]["side"] == "right"
    assert spec["data"][0]["colorbar"]["orientation"] == "h"
    under = {"data": [{"type": "heatmap", "colorbar": {"orientation": "h", "yanchor": "top",
                                                       "y": -0.3, "title": {"text": "s"}}}
                      for _ in range(3)], "layout": {}}  # fmt: skip
    for bar in (trace["colorbar"] for trace in present.enlarged(under)["data"]):
        assert (bar["yref"], bar["y"], bar["yanchor"]) == ("container", 0.0, "bottom")
        assert bar["title"] == {"text": "s", "side": "bottom"}


def test_heatmaps_side_by_side_get_a_row_per_token_and_every_label():
    """The lessons' panels (kernel: two, merged W_QK: three) share their rows: each row
    20 px and every token labelled, as one token heatmap (plotly thinned them to every
    second token at 20 px); stacked panels or other traces keep their layout."""
    t, labels = 16, [f"{i}·w" for i in range(16)]
    heat = {"type": "heatmap", "z": np.eye(t), "x": labels, "y": labels}
    axes = {"xaxis": {"type": "category", "domain": [0, 0.46]},
            "xaxis2": {"type": "category", "domain": [0.54, 1]},
            "yaxis": {"type": "category"}, "yaxis2": {"type": "category"}}  # fmt: skip
    spec = {"data": [heat, {**heat, "xaxis": "x2", "yaxis": "y2"}], "layout": axes}
    assert present.token_rows(spec) == t
    layout = present.enlarged(spec)["layout"]
    assert layout["height"] == present.ROW_PX * t + present.FRAME_PX
    assert all(layout[k]["dtick"] == 1 for k in axes)
    stacked = {**spec, "layout": {**axes, "yaxis2": {"type": "category", "domain": [0, 0.4]}}}
    assert present.token_rows(stacked) is None
    assert "dtick" not in present.enlarged(stacked)["layout"]["yaxis"]


def test_a_title_over_a_legend_above_the_plot_gets_room():
    """soft vs hard's entropy figure: its two 20 px legend rows ran into the 26 px title."""
    spec = {"data": [{"type": "bar", "y": [1, 2]}],
            "layout": {"title": {"text": "Row entropy"}, "margin": {"t": 80},
                       "legend": {"orientation": "h", "y": 1.0, "yanchor": "bottom"}}}  # fmt: skip
    assert present.enlarged(spec)["layout"]["margin"]["t"] == present.LEGEND_TOP_PX
    below = {**spec, "layout": {**spec["layout"], "legend": {"orientation": "h", "y": -0.3}}}
    assert present.enlarged(below)["layout"]["margin"]["t"] == 80


def test_play_frames_are_kept_with_projector_sized_text_and_a_wired_spec_stays_wired():
    spec = wired(attention.attention_with_row(_causal(8), list("abcdefgh"), 3))
    assert spec["frames"]  # ▶ play through the queries
    big = present.enlarged(spec)
    assert isinstance(big, type(spec))  # not walked again by ui.figures.plot
    assert len(big["frames"]) == len(spec["frames"])
    for new, old in zip(big["frames"], spec["frames"], strict=True):
        assert new["data"] is old["data"]  # the traces shared
        sizes = [a["font"]["size"] for a in new["layout"]["annotations"]]
        assert sizes and min(sizes) >= present.FONT_PX
    assert spec["frames"][0]["layout"]["annotations"][0]["font"]["size"] < 20  # untouched
    go.Figure(big)


def test_a_figure_fits_the_room_above_the_fold():
    """``max_height``: a lecture step's figure ends above a 1280×720 fold (#21 item 3):
    a chart is made that tall, a 16-token heatmap gives up to 5 px a row, while a longer
    one keeps a label per token and a diagram of text boxes (no traces) its height."""

    def heatmaps(t: int, bars_under: bool) -> dict:
        labels = [f"{i}·w" for i in range(t)]
        bar = {"orientation": "h", "yanchor": "top", "y": -0.3} if bars_under else {}
        return {"data": [{"type": "heatmap", "z": np.eye(t), "x": labels, "y": labels,
                          "colorbar": bar}], "layout": {"yaxis": {"type": "category"}}}  # fmt: skip

    fitted = present.enlarged(heatmaps(16, bars_under=True), max_height=510)["layout"]
    assert fitted["height"] <= 510 and fitted["yaxis"]["dtick"] == 1  # every token labelled
    assert (510 - present.FRAME_PX - present.BARS_PX) / 16 >= present.FIT_ROW_PX
    assert present.enlarged(heatmaps(16, False), max_height=900)["layout"]["height"] == (
        present.ROW_PX * 16 + present.FRAME_PX  # room enough: 20 px rows
    )
    long = present.enlarged(heatmaps(19, False), max_height=510)["layout"]
    assert long["height"] == present.ROW_PX * 19 + present.FRAME_PX
    chart = {"data": [{"type": "scatter", "y": [1, 2]}],
             "layout": {"height": 560, "xaxis": {"type": "log"}}}  # fmt: skip
    assert present.enlarged(chart)["layout"]["xaxis"]["dtick"] == 1  # no 15 px 2s and 5s
    assert present.enlarged(chart, max_height=420)["layout"]["height"] == 420
    assert present.enlarged(chart)["layout"]["height"] == 560
    diagram = {"data": [], "layout": {"height": 786, "annotations": [{"text": "x"}]}}
    assert present.enlarged(diagram, max_height=510)["layout"]["height"] == 786
    state = {"data": [{"type": "heatmap", "z": np.eye(32), "y": list(range(32))}], "layout": {}}
    assert present.token_rows(state) is None  # rows of feature dims are not tokens


def test_a_vega_lite_chart_gets_projector_sized_text():
    """The positional encoding's charts (Vega-Lite) set their fonts per axis, which a
    ``config`` cannot override: every axis and legend gets 20 px labels and titles, the
    axis thins what would overlap, and the cached spec and its Arrow bytes are shared."""
    import json

    from viz import positional
    from viz.spec import vega_lite

    pe = np.sin(np.arange(64 * 32, dtype=float).reshape(64, 32) / 7)  # (T, C)
    spec = vega_lite(positional.pe_heatmap(pe))
    before = json.dumps({k: v for k, v in spec.items() if k != "datasets"}, sort_keys=True)
    big = present.vega_enlarged(spec)
    assert big["datasets"] is spec["datasets"]
    found = []

    def walk(key, value):
        if isinstance(value, dict):
            if key in ("axis", "legend"):
                found.append((key, value))
            for k, v in value.items():
                walk(k, v)
        elif isinstance(value, list):
            for v in value:
                walk(key, v)

    walk("", {k: v for k, v in big.items() if k != "datasets"})
    assert {k for k, _ in found} == {"axis", "legend"}
    for key, settings in found:
        assert settings["labelFontSize"] >= 20 and settings["titleFontSize"] >= 20
        assert key == "legend" or settings["labelOverlap"] is True
    assert json.dumps({k: v for k, v in spec.items() if k != "datasets"}, sort_keys=True) == before
