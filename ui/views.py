"""The views of the visualizer page, by key: a view's options function draws its
own controls (query token, mode, ...) and returns their values; its renderer takes the
``Selection`` with those options and lays out figures built by ``viz/`` from the real
model's arrays. One module per view (``ui/attention_view.py``, ``ui/compare.py``,
``ui/shapes_view.py``, ``ui/positional_view.py``, ``ui/recurrence.py`` (mask),
``ui/block_view.py``, ``ui/predictions.py``, ``ui/stats_view.py``, the lab's views and
``ui/training_view.py``).

A rerun draws the view on screen only, and its figures come from ``ui.specs``
(cached across sessions for the shipped models).
"""

from __future__ import annotations

from ui.attention_view import attention_options, attention_view
from ui.block_view import block_numbers_view
from ui.compare import compare_options, compare_view
from ui.lab_view import ablate_options, ablate_view
from ui.lens_view import lens_options, lens_view
from ui.patch_view import patch_options, patch_view
from ui.positional_view import positional_options, positional_view
from ui.predictions import predict_options, predict_view
from ui.recurrence import mask_view
from ui.selection import Selection
from ui.shapes_view import shapes_options, shapes_view
from ui.stats_view import stats_view
from ui.training_view import training_options, training_view


def no_options(sel: Selection) -> dict:
    """The options of a view without controls of its own."""
    return {}


RENDERERS = {
    "attention": attention_view,
    "compare": compare_view,
    "shapes": shapes_view,
    "positional": positional_view,
    "mask": mask_view,
    "block": block_numbers_view,
    "predict": predict_view,
    "stats": stats_view,
    "ablate": ablate_view,
    "patch": patch_view,
    "lens": lens_view,
    "training": training_view,
}
OPTIONS = {  # views with controls of their own; the others take no_options
    "attention": attention_options,
    "compare": compare_options,
    "shapes": shapes_options,
    "positional": positional_options,
    "predict": predict_options,
    "ablate": ablate_options,
    "patch": patch_options,
    "lens": lens_options,
    "training": training_options,
}
