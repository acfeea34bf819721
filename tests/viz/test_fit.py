"""Every token figure stays readable at any T up to a GPT-2 context: within one screen,
every drawn tick label with room to read it, hover per cell with the real weights."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.viz.test_attention import causal, figure, heatmaps
from viz import attention, fit, mask, play, style, tensors

LENGTHS = (8, 64, 129, 256, 1024)
D_HEAD = 64


def tokens(t: int) -> list[str]:
    return [f"tok{i % 7}" for i in range(t)]  # repeats: labels stay unique by position


def axis_labels_drawn(axis: dict, n: int) -> int:
    """How many of n category labels plotly draws on ``axis`` (a layout axis dict):
    every ceil(n / nticks)-th with ``nticks``, all of them without."""
    nticks = axis.get("nticks")
    return n if nticks is None else math.ceil(n / math.ceil(n / nticks))


def builders(t: int) -> dict:
    """Every figure of T token rows the visualizer draws, at T."""
    w = causal(t)  # (T, T)
    q = np.random.default_rng(t).normal(size=(t, D_HEAD)).astype(np.float32)  # (T, d_head)
    return {
        "attention_with_row": attention.attention_with_row(w, tokens(t), t - 1),
        "attention_heatmap": attention.attention_heatmap(w, tokens(t)),
        "causal_mask_panels": mask.causal_mask_panels(np.log(w + 1e-9), w, tokens(t)),
        "matrix_heatmap": tensors.matrix_heatmap(q, tokens(t), None, "q", "d_head", "token"),
    }


@pytest.mark.parametrize("t", LENGTHS)
def test_every_token_figure_fits_one_screen(t):
    for name, spec in builders(t).items():
        height = spec["layout"].get("height", fit.DEFAULT_HEIGHT_PX)
        assert height <= fit.MAX_HEIGHT_PX, name
        assert "width" not in spec["layout"], name  # the chart fills its column


@pytest.mark.parametrize("t", LENGTHS)
def test_tick_labels_thin_out_to_a_readable_count(t):
    """Plotly draws a category label every 19 px at most by itself (16 px type); where
    that is too tight the figures ask for fewer (``nticks``): at least 22 px apart."""
    for name, spec in builders(t).items():
        layout = spec["layout"]
        height = layout.get("height", fit.DEFAULT_HEIGHT_PX)
        for key, axis in layout.items():
            if not key.startswith(("xaxis", "yaxis")) or axis.get("type") != "category":
                continue
            n = D_HEAD if (key == "xaxis" and name == "matrix_heatmap") else t
            if "nticks" not in axis:
                assert n <= 64 or (name == "matrix_heatmap" and "height" not in layout), name
                continue
            drawn = axis_labels_drawn(axis, n)
            assert 2 <= drawn <= axis["nticks"] < n, (name, key)
            if key.startswith("yaxis"):
                assert drawn * fit.ROW_PX <= height - fit.MARGINS_PX + fit.ROW_PX, (name, key)
            else:
                assert drawn * fit.LABEL_PX <= fit.WIDE_PX, (name, key)


@pytest.mark.parametrize("t", LENGTHS)
def test_hover_stays_per_cell_with_both_tokens_and_the_weight(t):
    w = causal(t)
    for spec in (
        attention.attention_with_row(w, tokens(t), 0),
        attention.attention_heatmap(w, tokens(t)),
    ):
        heat = spec["data"][0]
        np.testing.assert_array_equal(heat["z"], w)  # every cell, the real weights
        assert heat["x"] == heat["y"] == style.token_labels(tokens(t))  # hover reads these
        assert all(s in heat["hovertemplate"] for s in ("%{x}", "%{y}", "%{z:.3f}"))


@pytest.mark.parametrize("t", LENGTHS)
def test_the_main_heatmap_shrinks_its_rows_not_the_page(t):
    spec = attention.attention_with_row(causal(t), tokens(t), t - 1)
    height = spec["layout"]["height"]
    band = play.BUTTONS_PX if t <= play.MAX_FRAMES else 0  # ▶ play under the title
    expected = min(fit.MAX_HEIGHT_PX, max(480, 22 * t + 260) + 260)  # as before, capped
    assert height == min(fit.MAX_HEIGHT_PX, expected + band)
    heat_px = height - band - fit.MARGINS_PX - attention.ROW_GAP_PX - attention.ROW_PX
    assert heat_px <= fit.COLUMN_PX  # cells about square in the attention view's column
    bars = spec["data"][1]
    # values on bars wide enough at 1280 px (#20 item 11: upright, never shrunk below 13 px)
    assert ("text" in bars) == (t * fit.BAR_TEXT_PX <= fit.HALF_1280_PX)
    if "text" in bars:
        assert bars["textangle"] == -90 and bars["textfont"]["size"] >= 13
        assert spec["layout"]["uniformtext"] == {"minsize": 13, "mode": "show"}
    figure(spec)  # a valid plotly figure at every T


def test_short_sentences_look_as_before():
    """Up to 17 tokens every row keeps its 22 px and every token labels both axes."""
    for t in range(1, 18):
        spec = attention.attention_with_row(causal(t), tokens(t), 0)
        assert spec["layout"]["height"] == max(480, 22 * t + 260) + 260 + play.BUTTONS_PX
        axes = (spec["layout"]["xaxis"], spec["layout"]["yaxis"])
        assert all("nticks" not in axis for axis in axes)
    # beside another figure at a 1280 px window: square cells of HALF_1280_PX
    height = attention.attention_heatmap(causal(14), tokens(14))["layout"]["height"]
    assert height == fit.HALF_1280_PX + fit.MARGINS_PX


@pytest.mark.parametrize("n", [1, 2, 13, 14, 64, 256, 1024, 4096])
@pytest.mark.parametrize("axis_px", [120, 320, 400, 900])
def test_label_ticks_bound_the_labels_drawn(n, axis_px):
    ticks = fit.label_ticks(n, axis_px)
    drawn = fit.shown_labels(n, axis_px)
    assert drawn == axis_labels_drawn(ticks, n)
    if not ticks:
        assert n <= max(2, axis_px // fit.LABEL_PX)  # all fit
    else:
        assert 2 <= drawn <= ticks["nticks"] and drawn * fit.LABEL_PX <= max(
            axis_px, 2 * fit.LABEL_PX
        )


def test_heat_height_is_monotone_and_capped():
    heights = [fit.heat_height(t, 260, fit.COLUMN_PX) for t in range(1, 1100)]
    assert heights == sorted(heights) and max(heights) == fit.MAX_HEIGHT_PX
    # Up to MAX_LABELLED tokens the rows keep room for every label (#20 item 8); past it
    # the heatmap is at most as tall as it is wide.
    labelled = fit.axis_px_for(fit.MAX_LABELLED) + fit.MARGINS_PX
    assert max(fit.heat_height(t) for t in range(1, 1100)) == labelled
    assert max(fit.heat_height(t) for t in range(41, 1100)) == fit.HALF_PX + fit.MARGINS_PX


def test_matrix_height_keeps_plotly_default_for_small_matrices():
    assert fit.matrix_height(32) is None and fit.matrix_height(145) is None
    assert fit.matrix_height(256) == 2 * 256 + 160 and fit.matrix_height(1024) == 900
    spec = tensors.matrix_heatmap(np.ones((14, 32)), tokens(14), None, "q", "d", "t")
    assert spec["layout"]["height"] == fit.DEFAULT_HEIGHT_PX  # plotly's, set: every label
    assert spec["layout"]["yaxis"]["tickvals"] == style.token_labels(tokens(14))
    assert len(heatmaps(spec)) == 1  # a valid plotly figure


@pytest.mark.parametrize("t", [8, 16, 24, 40])
def test_every_token_labels_the_axes_up_to_40_tokens(t):
    """#20 item 8: up to ``fit.MAX_LABELLED`` tokens every heatmap the compare, mask, Q/K/V
    and Translate views draw names every token on both axes (plotly's own thinning left
    every second one out at 16 tokens), in a font of at least ``MIN_TICK_FONT`` px that
    fits the axis: n labels x font x LINE <= the axis's length at a 1280 px window."""
    from viz import seq2seq

    w = causal(t)
    q = np.ones((t, D_HEAD), np.float32)
    labels = style.token_labels(tokens(t))
    align = seq2seq.alignment(w, tokens(t), tokens(t)).to_plotly_json()
    figures = {
        "compare": attention.attention_heatmap(w, tokens(t)),
        "compare, stacked": attention.attention_heatmap(w, tokens(t), width_px=fit.FULL_1280_PX),
        "mask": mask.causal_mask_panels(np.log(w + 1e-9), w, tokens(t)),
        "qkv": tensors.matrix_heatmap(q, tokens(t), None, "q", "d_head", "token"),
        "alignment": align,
    }
    for name, spec in figures.items():
        layout = spec["layout"]
        for key, axis in layout.items():
            if not key.startswith(("xaxis", "yaxis")) or (name == "qkv" and key == "xaxis"):
                continue
            if "overlaying" in axis:  # a click layer's, drawn nowhere (viz.click)
                continue
            shown = list(axis.get("ticktext") or [])
            assert len(shown) == t, (name, key)
            assert [str(s) for s in shown] == labels or name == "alignment", (name, key)
            assert axis["tickfont"]["size"] >= fit.MIN_TICK_FONT, (name, key)
