"""Click a heatmap cell to pick its query token (#21 item 4).

The heatmaps carry an invisible scatter point on every cell
(``viz.click.add_click_layer``), whose ``customdata`` is the row, the query (Streamlit's
own chart returned no selection for heatmaps, streamlit issue 8760; the layer also gives
each cell its hover text). Clicking a cell sends that point's ``customdata``
(``ui.chart``); the chart's callback writes the query into the controls that show one
(the attention view's query token, the Predictions position) before the rerun draws
them, so the row bars, the walk-through and the predictions follow, and the dropdown
shows the same token.
The mask view's panels carry the same layer (``viz.mask.with_click_layers``); the row bars
under the attention heatmap carry each key's index, so a click on a bar makes that token
the query at any length (the cell layers stop at 128 tokens).
"""

from __future__ import annotations

import streamlit as st

from ui import chart

QUERY = "_query"  # the attention view's query, kept across pages (ui.views)
FOLLOWERS = ("query_token", "pred_pos", QUERY)  # keys that take the clicked query


def select_query(i: int) -> None:
    """Query ``i`` in every control that shows a query token."""
    for key in FOLLOWERS:
        st.session_state[key] = i


def keep_query() -> None:
    """The Query token control's ``on_change``: keep its choice under :data:`QUERY`."""
    st.session_state[QUERY] = st.session_state["query_token"]


def on_click(chart_key: str, tokens: tuple[str, ...] | None = None):
    """The ``on_select`` callback of the chart ``chart_key``; with the sentence's
    ``tokens``, the clicked query is also :func:`remember`-ed for it (views without the
    Query token control: the mask view, the block view)."""

    def picked() -> None:
        row = chart.clicked(st.session_state.get(chart_key))  # the clicked cell's query
        if row is None or (tokens is not None and not 0 <= row < len(tokens)):
            return
        select_query(row)
        if tokens is not None:
            remember(tokens, row)

    return picked


_CHOSEN = "_chosen_query"  # (tokens, query): outlives the attention view's control


def remember(tokens: tuple[str, ...], query: int) -> None:
    """The query picked for the sentence of ``tokens`` (views without the control, the
    mask view, outline its row)."""
    st.session_state[_CHOSEN] = (tuple(tokens), query)


def chosen(tokens: tuple[str, ...]) -> int | None:
    """The query picked for the sentence of ``tokens``, or None."""
    kept = st.session_state.get(_CHOSEN)
    return kept[1] if kept is not None and kept[0] == tuple(tokens) else None
