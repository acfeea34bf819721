"""The lecture path (issue #21): the story of attention in d2l.ai's order, one numbered
step a page with its live figure. ``story`` lists the steps, ``page`` draws one."""

from ui.lecture.page import page

__all__ = ["page"]
