"""What every lesson page starts with: title, link notices, intro and the sentence's
analysis. The model, sentence, layer and head come from the shared sidebar
(``ui.sidebar.selection``), the same widgets as on the visualizer page."""

from __future__ import annotations

from ui import visualizer
from ui.lacking import lacks
from ui.selection import Selection

NEEDS = ("q", "k")  # every lesson computes from the queries and keys of a head


def start(sel: Selection, title: str, intro: str) -> Selection | None:
    """Title, notices and intro; ``sel`` with its analysis, or None (with a hint, or one
    line on what the model lacks) when the sentence has no tokens, the model failed on
    it, or it gives no queries and keys (a foreign ONNX graph)."""
    hint = " Or pick an example sentence in the sidebar."
    if not visualizer.start(sel, title, intro, empty_hint=hint):
        return None
    return None if lacks(sel, NEEDS, f"The lesson “{title}”") else sel
