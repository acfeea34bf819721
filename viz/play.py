"""Play: a figure's steps animated in the browser (plotly frames), so that a class
pressing play costs the server nothing per frame (#21 item 5).

:func:`controls` gives the layout's play / pause buttons; each figure module builds its
own frames (named by their step).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from viz import spec, style
from viz.heat import axis_labels

FRAME_MS = 700  # one step on screen
MAX_FRAMES = 64  # frames are sent with the figure: a longer sentence plays no more


def _animate(names: list[str] | None, duration: int) -> list:
    frame = {"duration": duration, "redraw": True}
    return [names, {"frame": frame, "mode": "immediate", "fromcurrent": True,
                    "transition": {"duration": 0}}]  # fmt: skip


# The title at the top of the figure and the buttons in a band of their own under it
# (#20: centred over a narrow plot, the title sat behind ▶ play ❚❚ pause).
TITLE_PLACE = {"yref": "container", "y": 1.0, "yanchor": "top", "pad": {"t": 8}}
# The margin above the plot (style.MARGIN's 80 px) holds the title (8-35 px) and the
# buttons (~28 px tall, 6 px above the plot); BUTTONS_PX more keeps them apart.
BUTTONS_PX = 6


def controls() -> dict:
    """The layout's ``updatemenus``: ▶ play (every frame from the one shown, one step
    every ``FRAME_MS``) and ❚❚ pause, just above the plot's top left corner (call
    :func:`make_room` on the layout too)."""
    buttons = [
        {"label": "▶ play", "method": "animate", "args": _animate(None, FRAME_MS)},
        {"label": "❚❚ pause", "method": "animate", "args": _animate([None], 0)},
    ]
    menu = {"type": "buttons", "direction": "left", "buttons": buttons, "showactive": False,
            "x": 0.0, "xanchor": "left", "y": 1.0, "yanchor": "bottom", "pad": {"b": 6},
            "font": {"size": style.TICK_SIZE}}  # fmt: skip
    return {"updatemenus": [menu]}


def make_room(layout: dict, max_height: int | None = None) -> dict:
    """``layout`` (changed in place and returned) with the title at the figure's top and
    ``BUTTONS_PX`` more top margin and height (at most ``max_height``), so the plot keeps
    its size where it can and the buttons sit between the title and the plot."""
    margin = {**style.MARGIN, **layout.get("margin", {})}
    layout["margin"] = {**margin, "t": margin["t"] + BUTTONS_PX}
    layout["title"] = {**layout.get("title", {}), **TITLE_PLACE}
    if "height" in layout:
        layout["height"] = min(layout["height"] + BUTTONS_PX, max_height or 1 << 30)
    return layout


def state_steps(states: object, normalizers: object, tokens: Sequence[object]) -> dict:
    """Linear attention's recurrence played token by token: the state S_i (T, D, D) as a
    heatmap and the normalizer z_i (T, D) as bars, one frame per token i, on one colour
    range and one bar range for all i (so the sums are seen growing). Starts at the
    last token; at most ``MAX_FRAMES`` tokens are played (the first ones).

    Raises:
        ValueError: when the shapes do not agree with each other or with the tokens.
    """
    S = np.asarray(states, dtype=np.float32)  # (T, D, D)
    z = np.asarray(normalizers, dtype=np.float32)  # (T, D)
    if S.ndim != 3 or z.ndim != 2 or S.shape[:2] != z.shape or S.shape[1] != S.shape[2]:
        raise ValueError(f"states {S.shape} and normalizers {z.shape} do not match")
    labels = style.token_labels(tokens)
    if len(labels) != S.shape[0]:
        raise ValueError(f"{S.shape[0]} steps but {len(labels)} tokens")
    n = min(S.shape[0], MAX_FRAMES)
    lo, hi = style.symmetric_range(S[:n])
    top = float(z[:n].max()) * 1.05 or 1.0
    last = n - 1

    def title(i: int) -> dict:
        return {"text": f"After token {labels[i]}: state S_{i} and normalizer z_{i}", **TITLE_PLACE}

    heat = {"type": "heatmap", "z": S[last], "zmin": lo, "zmax": hi, "zmid": 0.0,
            "colorscale": style.colorscale(style.DIVERGING), "xaxis": "x", "yaxis": "y",
            "colorbar": {"x": 0.6, "len": 0.9},
            "hovertemplate": "S[%{y}, %{x}] = %{z:.3f}<extra></extra>"}  # fmt: skip
    bars = {"type": "bar", "y": z[last], "xaxis": "x2", "yaxis": "y2", "showlegend": False,
            "marker": {"color": style.BAR_COLOR},
            "hovertemplate": "z[%{x}] = %{y:.3f}<extra></extra>"}  # fmt: skip
    frames = [{"name": str(i), "data": [{"type": "heatmap", "z": S[i]}, {"type": "bar", "y": z[i]}], "traces": [0, 1],
               "layout": {"title": title(i)}} for i in range(n)]  # fmt: skip
    layout = {
        "xaxis": {"domain": [0.0, 0.55], **spec.titled("value dim")},
        "yaxis": {"autorange": "reversed", **spec.titled("key feature dim")},
        "xaxis2": {"domain": [0.7, 1.0], "anchor": "y2", **spec.titled("dimension")},
        "yaxis2": {"range": [0.0, top], "anchor": "x2", **spec.titled("z_i")},
        **controls(),
    }
    fig = spec.figure([heat, bars], layout, height=520)
    fig["layout"]["title"] = {**fig["layout"].get("title", {}), **title(last)}
    make_room(fig["layout"])
    fig["frames"] = frames
    return fig


def bar_steps(rows: object, labels: Sequence[str], titles: Sequence[str]) -> dict:
    """One bar chart per step, played: ``rows`` (n, S) (a decoder's attention over the S
    source words at each of its n steps), ``labels`` the S words, ``titles`` (n,) one
    line per step (plain text, escaped here). Starts at the first step; at most
    ``MAX_FRAMES`` steps.

    Raises:
        ValueError: when the shapes, labels and titles do not agree.
    """
    w = np.asarray(rows, dtype=np.float32)  # (n, S)
    if w.ndim != 2 or w.shape[0] != len(titles):
        raise ValueError(f"{w.shape} rows for {len(titles)} titles")
    x = axis_labels(list(labels), w.shape[1], "s")
    n = min(w.shape[0], MAX_FRAMES)

    def title(i: int) -> dict:
        return {"text": style.escape(titles[i]), **TITLE_PLACE}

    bars = {"type": "bar", "x": x, "y": w[0], "marker": {"color": style.BAR_COLOR},
            "hovertemplate": "%{x}: %{y:.3f}<extra></extra>"}  # fmt: skip
    frames = [{"name": str(i), "data": [{"type": "bar", "y": w[i]}], "traces": [0],
               "layout": {"title": title(i)}} for i in range(n)]  # fmt: skip
    layout = {
        "xaxis": {"type": "category", **spec.titled("source word")},
        "yaxis": {"range": [0.0, 1.0], **spec.titled("weight")},
        **controls(),
    }
    fig = spec.figure([bars], layout, height=380)
    fig["layout"]["title"] = {**fig["layout"].get("title", {}), **title(0)}
    make_room(fig["layout"])
    fig["frames"] = frames
    return fig
