"""Contents of the plotly attention figures."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from viz import attention, grid, style
from viz.click import CLICK

TOKENS = ["the", "cat", "<img src=x onerror=alert(1)>", "the", "dog"]
T = len(TOKENS)


def causal(t: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = np.tril(rng.random((t, t)) + 0.1)
    return a / a.sum(axis=-1, keepdims=True)


def figure(spec: dict) -> go.Figure:
    """The plotly.py figure of a plain spec: plotly.py validates every property here
    (the app sends specs unvalidated), so an invalid spec fails the test."""
    assert isinstance(spec, dict) and set(spec) - {"frames"} == {"data", "layout"}
    return go.Figure(spec)


def heatmaps(fig: go.Figure | dict) -> list[go.Heatmap]:
    fig = figure(fig) if isinstance(fig, dict) else fig
    return [tr for tr in fig.data if isinstance(tr, go.Heatmap)]


def all_text(fig: go.Figure | dict) -> str:
    """Every string in the figure, unescaped (to_json would encode "<" as \\u003c)."""
    return repr((figure(fig) if isinstance(fig, dict) else fig).to_dict())


def test_attention_heatmap_contents():
    w = causal(T)
    fig = figure(attention.attention_heatmap(w, TOKENS, title="one head"))
    (hm,) = heatmaps(fig)
    assert np.asarray(hm.z).shape == (T, T)
    np.testing.assert_allclose(np.asarray(hm.z), w)
    assert fig.layout.xaxis.title.text == "key"
    assert fig.layout.yaxis.title.text == "query"
    # first token at top; the cells' own ranges, whatever the click layer's markers pad
    assert list(fig.layout.yaxis.range) == [T - 0.5, -0.5] and not fig.layout.yaxis.autorange
    assert list(fig.layout.xaxis.range) == [-0.5, T - 0.5]
    assert (hm.zmin, hm.zmax) == (0.0, 1.0)
    assert hm.colorbar.title.text
    assert "query" in hm.hovertemplate and "key" in hm.hovertemplate
    assert "%{z:.3f}" in hm.hovertemplate
    assert fig.layout.font.size >= 16


def test_repeated_tokens_get_distinct_labels():
    fig = attention.attention_heatmap(causal(T), TOKENS)
    (hm,) = heatmaps(fig)
    assert len(set(hm.x)) == T and len(set(hm.y)) == T
    assert hm.x[0] == "0·the" and hm.x[3] == "3·the"


def test_html_in_tokens_is_escaped():
    fig = attention.attention_heatmap(causal(T), TOKENS)
    (hm,) = heatmaps(fig)
    assert hm.x[2] == "2·&lt;img src=x onerror=alert(1)&gt;"
    for label in list(hm.x) + list(hm.y):
        assert "<" not in label and ">" not in label
    # hover shows the (escaped) token through the axis labels
    assert "%{y}" in hm.hovertemplate and "%{x}" in hm.hovertemplate
    assert "<img" not in all_text(fig)
    assert "&lt;img src=x onerror=alert(1)&gt;" in all_text(fig)


def test_ampersand_escaped():
    assert style.token_labels(["a&b"]) == ["0·a&amp;b"]


def test_attention_heatmap_errors():
    with pytest.raises(ValueError):
        attention.attention_heatmap(np.zeros((3, 4)), ["a", "b", "c"])
    with pytest.raises(ValueError):
        attention.attention_heatmap(np.zeros((3, 3)), ["a", "b"])


def test_head_grid_has_l_times_h_heatmaps_with_shared_axis():
    L, H = 2, 3
    attn = np.stack([np.stack([causal(T, seed=i * H + h) for h in range(H)]) for i in range(L)])
    fig = figure(grid.head_grid(attn, TOKENS))
    maps = heatmaps(fig)
    assert len(maps) == L * H
    assert all(m.coloraxis == "coloraxis" for m in maps)
    assert (fig.layout.coloraxis.cmin, fig.layout.coloraxis.cmax) == (0.0, 1.0)
    titles = [a.text for a in fig.layout.annotations]
    assert titles == ["L0 H0", "L0 H1", "L0 H2", "L1 H0", "L1 H1", "L1 H2"]
    np.testing.assert_allclose(np.asarray(maps[4].z), attn[1, 1])
    assert "<img" not in all_text(fig)
    with pytest.raises(ValueError):
        grid.head_grid(attn[0], TOKENS)


def test_head_grid_hides_labels_for_long_inputs():
    attn = causal(20)[None, None]
    fig = figure(grid.head_grid(attn, [f"t{i}" for i in range(20)], max_tokens_label=10))
    assert fig.layout.xaxis.showticklabels is False


def test_attention_with_row_puts_one_query_row_under_its_column():
    w = causal(T)
    fig = figure(attention.attention_with_row(w, TOKENS, query_index=3, title="L0 H1"))
    heat, bar, click, columns = fig.data
    assert isinstance(heat, go.Heatmap) and isinstance(bar, go.Bar)
    # #44 item 5: each key's whole column is a click target, from 0 to the axis's top
    assert columns.name == attention.KEY_COLUMNS and fig.layout.barmode == "overlay"
    assert list(columns.customdata) == list(range(T)) and list(columns.x) == list(bar.x)
    np.testing.assert_allclose(np.asarray(columns.y), fig.layout.yaxis2.range[1])
    assert click.name == CLICK and (click.xaxis, click.yaxis) == (
        "x11",
        "y11",
    )  # tests/viz/test_click.py
    # ▶ play: one frame per query, each moving the bars (trace 1) and the outline
    frames = fig.frames
    assert [f.name for f in frames] == [str(i) for i in range(T)] and frames[0].traces == (1,)
    np.testing.assert_allclose(np.asarray(frames[2].data[0].y), w[2])
    assert frames[2].layout.shapes[0].y0 == 1.5
    assert fig.layout.updatemenus[0].buttons[0].method == "animate"
    np.testing.assert_allclose(np.asarray(heat.z), w)
    np.testing.assert_allclose(np.asarray(bar.y), w[3])  # the bars are row 3 of the heatmap
    assert list(bar.x) == list(heat.x) == style.token_labels(TOKENS)
    assert (bar.xaxis, bar.yaxis, heat.xaxis or "x") == ("x", "y2", "x")  # one key axis
    assert bar.marker.color[3] != bar.marker.color[0]
    (outline,) = fig.layout.shapes
    assert (outline.y0, outline.y1) == (2.5, 3.5)  # row 3 is outlined
    bars_top, heat_bottom = fig.layout.yaxis2.domain[1], fig.layout.yaxis.domain[0]
    assert bars_top < heat_bottom  # the bars sit under the heatmap, not on it
    assert "3·the" in fig.layout.annotations[0].text and fig.layout.title.text == "L0 H1"
    with pytest.raises(ValueError):
        attention.attention_with_row(w, TOKENS, query_index=T)


@pytest.mark.parametrize("signed", [False, True])  # softmax rows; the delta model's signed weights
def test_a_figure_carries_each_other_heads_figure_as_its_changes(signed):
    """``with_heads``: the shown head's figure with another head's changes laid over it
    (as ``ui/chart.js`` draws a picked head) is that head's own figure, but for the
    cells' hover text (blank until the rerun) and the ▶ frames (they come with it)."""
    rng = np.random.default_rng(3)
    w = rng.random((3, 6, 6)) - (0.4 if signed else 0.0)  # (H, T, T)
    w[2] *= 3.0  # another range of weights: the bars' axis and the colour scale move
    tokens = ["the", "cat", "sat", "on", "the", "mat"]
    figs = [attention.attention_with_row(w[h], tokens, 4, title=f"head {h}") for h in range(3)]
    shown = attention.with_heads(
        attention.attention_with_row(w[0], tokens, 4, title="head 0"),
        {
            h: attention.attention_with_row(w[h], tokens, 4, f"head {h}", frames=False)
            for h in (1, 2)
        },
    )
    assert set(shown["heads"]) == {"1", "2"}
    for h in (1, 2):
        change = shown["heads"][str(h)]
        data = [{**t, **c} for t, c in zip(shown["data"], change["data"], strict=True)]
        layout = {**shown["layout"], **change["layout"]}
        assert layout == figs[h]["layout"]
        for drawn, own in zip(data, figs[h]["data"], strict=True):
            assert drawn.keys() == own.keys()
            for key in own:
                if key == "hovertext":
                    assert drawn[key] == "" and len(own[key]) == 36  # until the rerun
                else:
                    assert np.array_equal(drawn[key], own[key]) if isinstance(
                        own[key], np.ndarray) else drawn[key] == own[key], key  # fmt: skip
    assert "z" in shown["heads"]["1"]["data"][0] and "title" in shown["heads"]["1"]["layout"]
