"""Presenter mode (#21 item 3): a toggle in the sidebar and ``?present=1`` in the URL,
kept across pages; the sidebar starts collapsed, captions fold under "Notes", figures
take the full width with projector-sized text (``viz.present``), the page's top padding
and title give way so that the main figure is above the fold.

Nothing here costs the server a computation: the figures are the cached specs with a
new layout on top (``ui.figures.plot``).
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

import pandas as pd
import streamlit as st

KEY = "present"  # the toggle's key and the URL's parameter
CSS = """<style>
[data-testid="stMainBlockContainer"] { padding-top: 1.2rem; padding-bottom: 2rem;
  max-width: 100%; }
[data-testid="stMain"] h1 { display: none; }
[data-testid="stHeader"] { height: 2.5rem; background: transparent; }
[data-testid="stMain"] h2 { padding-top: 0.2rem; padding-bottom: 0.2rem; }
[data-testid="stMetricLabel"] p { font-size: 1.25rem; }
[data-testid="stTable"] th, [data-testid="stTable"] td { font-size: 20px; }
</style>"""


def is_on() -> bool:
    """Whether this session presents."""
    return bool(st.session_state.get(KEY))


def flow_columns() -> int:
    """Columns of the Q/K/V shape flow (``viz.shape_flow``): two when presenting (nine
    stages of 20 px text, half as tall: above a 1280×720 fold), else one."""
    return 2 if is_on() else 1


def from_url() -> bool:
    """Read ``?present=1`` (a link) into the session, before the toggle is drawn; whether
    presenter mode is on."""
    if st.query_params.get(KEY) == "1":
        st.session_state[KEY] = True
    return is_on()


def _to_url() -> None:
    if is_on():
        st.query_params[KEY] = "1"
    elif KEY in st.query_params:
        del st.query_params[KEY]


def control() -> None:
    """The toggle (in the sidebar, on every page), the URL kept in step with it (a page
    switch drops unbound parameters: ``present=1`` is written back on every run), and
    the presenter's page style."""
    st.sidebar.toggle(
        "Presenter mode",
        key=KEY,
        on_change=_to_url,
        help="For a projector: sidebar collapsed, large text, figures full width, notes "
        "folded. The link (?present=1) opens it.",
    )
    if is_on():
        _to_url()
        st.html(CSS)


def table(frame, height: int | str = "content", float_format: str = "{:g}",
          bar: str | None = None, column_config: dict | None = None) -> None:  # fmt: skip
    """A table of numbers (a DataFrame, an Arrow table or a list of row dicts):
    ``st.dataframe`` (sortable, scrolls), or when presenting a static ``st.table`` in
    20 px text (the dataframe's canvas keeps its small font, and scrolls rows out of view).

    Presenting, the cells are the strings shown (:func:`shown`): a pandas ``Styler`` did
    the same in Streamlit's hands for 40 ms of the server's time a table (the walk-through
    under every head change: presenter mode cost 20 ms a rerun over the +5 ms of #21).

    Args:
        height, column_config: the dataframe's (not presenting).
        float_format: presenting, every float column's format (default its shortest
            form, as the dataframe prints it: 0.23, not 0.2300).
        bar: presenting, a column of weights in 0..1 drawn as a bar after each number.
    """
    if not is_on():
        st.dataframe(frame, hide_index=True, height=height, column_config=column_config)
        return
    df = frame.to_pandas() if hasattr(frame, "to_pandas") else pd.DataFrame(frame)
    st.table(shown(df, float_format, bar), hide_index=True)


BAR_WIDTH = 10  # characters for a weight of 1 (eighths below): one line at 1280 px
_EIGHTHS = " ▏▎▍▌▋▊▉"


def text_bar(value: float) -> str:
    """A weight as a bar of block characters: ``BAR_WIDTH`` full blocks for 1, eighths
    of one for the rest; clipped to 0..1 (a negative weight has no bar)."""
    eighths = round(min(max(float(value), 0.0), 1.0) * BAR_WIDTH * 8)
    full, rest = divmod(eighths, 8)
    return "█" * full + (_EIGHTHS[rest] if rest else "")


def shown(df: pd.DataFrame, float_format: str = "{:g}", bar: str | None = None) -> pd.DataFrame:
    """``df`` as the strings a presenter's table prints: every float column in
    ``float_format``, the ``bar`` column's weights (0..1) each followed by its
    :func:`text_bar`; other columns as they are. A new frame (``df`` is not changed)."""
    out = df.copy()
    for column in df.select_dtypes("float").columns:
        numbers = df[column].tolist()
        text = [float_format.format(v) for v in numbers]
        if column == bar:
            text = [f"{t} {text_bar(v)}" for t, v in zip(text, numbers, strict=True)]
        out[column] = text
    return out


@contextmanager
def notes():
    """Where captions go: in place, or folded under "Notes" when presenting."""
    if is_on():
        with st.expander("Notes", icon=":material/speaker_notes:"):
            yield
    else:
        yield


_FOLD = threading.local()  # .px: the height the figures drawn now must keep under


@contextmanager
def above_fold(px: int):
    """Figures plotted in this block are at most ``px`` tall when presenting (the room
    between what is above them and the bottom of a 1280×720 screen), so that a lecture
    step's figure is seen whole without scrolling (#21 item 3)."""
    before = getattr(_FOLD, "px", None)
    _FOLD.px = px if before is None else min(px, before)
    try:
        yield
    finally:
        _FOLD.px = before


def fold_px() -> int | None:
    """The height limit of :func:`above_fold` in force (None outside one)."""
    return getattr(_FOLD, "px", None)
