"""Play: a figure's steps animated in the browser (plotly frames), so that a class
pressing play costs the server nothing per frame (#21 item 5).

:func:`controls` gives the layout's play / pause buttons; each figure module builds its
own frames (named by their step).
"""

from __future__ import annotations

FRAME_MS = 700  # one step on screen
MAX_FRAMES = 64  # frames are sent with the figure: a longer sentence plays no more


def _animate(names: list[str] | None, duration: int) -> list:
    frame = {"duration": duration, "redraw": True}
    return [names, {"frame": frame, "mode": "immediate", "fromcurrent": True,
                    "transition": {"duration": 0}}]  # fmt: skip


def controls() -> dict:
    """The layout's ``updatemenus``: ▶ play (every frame from the one shown, one step
    every ``FRAME_MS``) and ❚❚ pause, above the figure's top left corner."""
    buttons = [
        {"label": "▶ play", "method": "animate", "args": _animate(None, FRAME_MS)},
        {"label": "❚❚ pause", "method": "animate", "args": _animate([None], 0)},
    ]
    menu = {"type": "buttons", "direction": "left", "buttons": buttons, "showactive": False,
            "x": 0.0, "xanchor": "left", "y": 1.0, "yanchor": "bottom", "pad": {"b": 30}}  # fmt: skip
    return {"updatemenus": [menu]}
