"""Lesson pages: soft vs hard attention, scoring functions, the kernel view and the
merged bilinear form. Each page takes the ``Selection`` of the shared sidebar (the
same widgets as on the visualizer) and computes with
``lessons``; figures come from ``viz.lessons``."""

from ui.lessons.encoder_decoder import page as encoder_decoder
from ui.lessons.forgetting import page as forgetting
from ui.lessons.kernel import page as kernel
from ui.lessons.merged import page as merged
from ui.lessons.not_explanation import page as not_explanation
from ui.lessons.scoring import page as scoring
from ui.lessons.soft_hard import page as soft_hard

__all__ = [
    "encoder_decoder", "forgetting", "kernel", "merged", "not_explanation", "scoring", "soft_hard",
]  # fmt: skip
