"""“Go deeper”: from a lecture step to the page and view that show it in full, in the
step's state (sentence, model, layer, head, view), by a link whose URL carries that
state (``ui.navigation.link``): a teacher can copy it, and inside the session the
page adopts it."""

from __future__ import annotations

from ui.lecture.step import Deeper
from ui.navigation import link


def link_to(deeper: Deeper) -> None:
    """The step's "Go deeper" link."""
    link(deeper.url_path, f"Go deeper: {deeper.label}", ":material/open_in_new:", deeper.params)
