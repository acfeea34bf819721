"""The lecture path page (``/lecture``): one numbered step at a time, the step in the
URL (``?step=4``), Previous / Next, the live figure and a link to go deeper."""

from __future__ import annotations

import streamlit as st

from ui import presenter, visualizer
from ui.lecture import deeper as go_deeper
from ui.lecture.step import lecture_selection
from ui.lecture.story import STEPS
from ui.link import quoted
from ui.notices import say
from ui.selection import Selection

NUMBERS = list(range(1, len(STEPS) + 1))
KEY = "step"  # the widget's key and the URL's parameter
# Presenting, a step's figure starts 141 px down (step control, title; the notes go under
# it): at most this tall, it ends above the fold of a 1280×720 screen.
FOLD_PX = 570


def _move(by: int) -> None:
    """Previous / Next: the step ``by`` away, within the path."""
    now = st.session_state.get(KEY) or 1
    st.session_state[KEY] = min(max(now + by, 1), len(STEPS))


def _check_link() -> None:
    """One line for a link's ``step`` that is not a step (the bound control drops it)."""
    raw = st.query_params.get(KEY)
    if raw is not None and raw not in {str(n) for n in NUMBERS}:
        say(
            "warning",
            f"Ignored the link's {KEY}={quoted(raw)}: the path has steps "
            f"1–{len(STEPS)}; here is step 1.",
            icon=":material/link_off:",
        )


def _stepper() -> int:
    """The step control, bound to ``?step=``."""
    _check_link()
    step = st.segmented_control(
        "Step",
        NUMBERS,
        default=1,
        key=KEY,
        required=True,
        format_func=str,
        help=" · ".join(f"{n}: {s.title}" for n, s in zip(NUMBERS, STEPS, strict=True)),
        bind="query-params",
        persist_state="session",
        label_visibility="collapsed" if presenter.is_on() else "visible",
    )
    return step or 1


def _previous_next(step: int, where: str) -> None:
    c1, c2, _ = st.columns([1, 1, 4])
    c1.button("Previous", key=f"lecture_prev_{where}", on_click=_move, args=(-1,),
              disabled=step == 1, icon=":material/arrow_back:")  # fmt: skip
    c2.button("Next", key=f"lecture_next_{where}", on_click=_move, args=(1,),
              disabled=step == len(STEPS), icon=":material/arrow_forward:", type="primary")  # fmt: skip


def _talking_points(step) -> None:
    with presenter.notes():  # folded under "Notes" when presenting
        st.markdown("\n".join(f"- {point}" for point in step.points))


def page(sel: Selection) -> None:
    """Render the lecture path for the sidebar's selection."""
    hint = " Or pick an example sentence in the sidebar."
    shown = lecture_selection(sel)
    if not visualizer.start(shown, "Lecture path", empty_hint=hint):
        return
    if shown.name != sel.name:
        st.caption("The lecture runs on the shipped models: here the softmax model.")
    sel = shown
    step = _stepper()
    current = STEPS[step - 1]
    st.header(f"{step}. {current.title}")
    presenting = presenter.is_on()
    if not presenting:
        _talking_points(current)
    with st.container(key="lecture_figure"), presenter.above_fold(FOLD_PX):
        deeper = current.draw(sel)
    if presenting:  # the teacher's notes, under the figure the class looks at
        _talking_points(current)
    go_deeper.link_to(deeper)
    _previous_next(step, "bottom")
