"""Pure pieces of the visualizer's views that the app (``ui/positional_view.py``) and the bench
(``bench/views.py``) share, so the bench builds each view as the app does without
importing ``ui/``."""

from __future__ import annotations


def default_dims(C: int) -> list[int]:
    """A sin/cos pair of the fastest frequency, then slower ones: 0, 1, C/8, C/4, C/2."""
    return sorted({d for d in (0, 1, C // 8, C // 4, C // 2) if d < C})
