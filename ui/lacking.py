"""One line, instead of a view, where the model does not give what the view shows.

A foreign ONNX graph (``upload/onnx_foreign.py``) gives its logits and attention
probabilities, and usually what its Softmax receives; it has no queries, keys, values,
pre-mask scores or positional encoding under any name the app could trust. A view that
needs one of those says so in one line and draws nothing else.
"""

from __future__ import annotations

from collections.abc import Iterable

from ui.notices import say
from ui.selection import Selection

FOREIGN_SOURCE = "ONNX (foreign)"  # upload.onnx_foreign.SOURCE, as the model card says
NAMES = {
    "q": "queries Q",
    "k": "keys K",
    "v": "values V",
    "head_out": "the heads' outputs",
    "pos_enc": "the positional encoding",
    "scores": "the pre-mask scores",
}


def is_foreign(sel: Selection) -> bool:
    """True for an ONNX graph not made by this project."""
    card = getattr(sel.model, "card", None)
    return card is not None and card.source == FOREIGN_SOURCE


def why_not(sel: Selection) -> str:
    """Why the selected model lacks an output."""
    if is_foreign(sel):
        return (
            "it is an ONNX graph not made by this project, and only its logits and the "
            "attention probabilities its Softmax nodes compute could be found in it"
        )
    return "its graphs do not return it"


def lacks(sel: Selection, needed: Iterable[str], what: str) -> bool:
    """Show one line and return True when the analysis lacks any of ``needed`` outputs.

    Args:
        needed: contract output names (``q``, ``k``, ``pos_enc``, ...).
        what: the view or lesson, as it is named on screen.
    """
    missing = [n for n in needed if n not in sel.result.outputs]
    if not missing:
        return False
    named = ", ".join(NAMES.get(n, n) for n in missing)
    say("info", f"{what} needs {named}, which this model does not give: {why_not(sel)}.")
    return True
