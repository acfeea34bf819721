"""What a step of the lecture path is: a title, talking points, a live figure and where
to go deeper; and the selection the steps draw from."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ui import loaders
from ui.selection import Selection


@dataclass(frozen=True)
class Deeper:
    """A link to the page (``url_path``) and view that shows a step in full, with the
    query parameters that open it in the same state."""

    url_path: str
    label: str
    params: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Step:
    """One numbered step: ``draw(sel)`` draws its live figure(s) and returns its link."""

    title: str
    points: tuple[str, ...]
    draw: Callable[[Selection], Deeper]


def lecture_selection(sel: Selection) -> Selection:
    """``sel`` on a shipped model: the lecture tells the story on the shipped models
    (an upload or a served model is replaced by the softmax model, same sentence,
    layer and head kept within its size)."""
    if sel.name in loaders.SHIPPED_KINDS:
        return sel
    model = loaders.get_model("softmax")
    cfg = model.config
    layer, head = min(sel.layer, cfg.n_layer - 1), min(sel.head, cfg.n_head - 1)
    return Selection("softmax", model, sel.text, layer, head)


def state(sel: Selection, **extra: object) -> dict[str, str]:
    """The visualizer's URL parameters for ``sel`` (model, sentence, layer, head) and
    ``extra`` (``view=...``, or a different ``layer``, ``text``...)."""
    params = {"model": sel.name, "text": sel.text, "layer": sel.layer, "head": sel.head}
    return {key: str(value) for key, value in {**params, **extra}.items()}
