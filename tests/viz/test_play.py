"""viz.play: frames that the browser plays, built from the real arrays."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from viz import play


def test_the_recurrence_plays_each_tokens_state_and_normalizer():
    rng = np.random.default_rng(0)
    S, z = rng.normal(size=(6, 4, 4)), rng.random((6, 4))  # (T, D, D), (T, D)
    fig = play.state_steps(S, z, list("abcdef"))
    figure = go.Figure(fig)  # valid for plotly.py
    assert [f.name for f in figure.frames] == [str(i) for i in range(6)]
    np.testing.assert_allclose(np.asarray(figure.frames[2].data[0].z), S[2], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(figure.frames[2].data[1].y), z[2], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(figure.data[0].z), S[5], rtol=1e-6)  # the last
    lo, hi = figure.data[0].zmin, figure.data[0].zmax  # one colour range for all steps
    assert -lo == hi >= np.abs(S).max() * (1 - 1e-6)
    assert figure.layout.updatemenus[0].buttons[0].label == "▶ play"


def test_a_long_sentence_plays_its_first_tokens_and_bad_shapes_are_refused():
    S, z = np.zeros((70, 2, 2)), np.ones((70, 2))
    assert len(play.state_steps(S, z, ["t"] * 70)["frames"]) == play.MAX_FRAMES
    with pytest.raises(ValueError, match="do not match"):
        play.state_steps(S[:, :1], z, ["t"] * 70)
    with pytest.raises(ValueError, match="tokens"):
        play.state_steps(S, z, ["t"] * 3)


def test_decoding_steps_play_one_bar_chart_per_step_with_escaped_titles():
    w = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1]])  # (n, S)
    fig = go.Figure(play.bar_steps(w, ["the", "<b>dog</b>", "."], ["reads <s>", "reads a"]))
    assert [f.name for f in fig.frames] == ["0", "1"]
    np.testing.assert_allclose(np.asarray(fig.frames[1].data[0].y), w[1], rtol=1e-6)
    assert fig.frames[0].layout.title.text == "reads &lt;s&gt;"
    assert "&lt;b&gt;dog&lt;/b&gt;" in list(fig.data[0].x)
    with pytest.raises(ValueError, match="titles"):
        play.bar_steps(w, ["a", "b", "c"], ["one"])


def test_the_title_stays_clear_of_the_play_buttons():
    """#20 (seen at 1280 px): centred over a narrow plot the title sat behind ▶ play ❚❚
    pause. The title hangs from the figure's top, the buttons stand on the plot, and the
    top margin holds both (title line 1.25 × its size, buttons ~28 px)."""
    import numpy as np

    from viz import attention, play, style

    w = np.tril(np.ones((6, 6))) / np.arange(1, 7)[:, None]
    figures = [
        attention.attention_with_row(w, list("abcdef"), 5, title="Layer 0, head 0"),
        play.bar_steps(w, list("abcdef"), [f"step {i}" for i in range(6)]),
        play.state_steps(np.ones((3, 4, 4)), np.ones((3, 4)), ["a", "b", "c"]),
    ]
    for fig in figures:
        layout = fig["layout"]
        title, menu = layout["title"], layout["updatemenus"][0]
        assert (title["yref"], title["y"], title["yanchor"]) == ("container", 1.0, "top")
        assert (menu["y"], menu["yanchor"]) == (1.0, "bottom")
        title_px = title["pad"]["t"] + 1.25 * title.get("font", {}).get("size", style.TITLE_SIZE)
        assert layout["margin"]["t"] >= title_px + 28 + menu["pad"]["b"] + 4
