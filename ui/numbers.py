"""A heatmap's numbers as a table a screen reader can read (#44 item 13): its text
alternative, folded under "Show the numbers" beneath the figure.

The table is built only while its expander is open (``on_change="rerun"``: opening it
reruns the app, whose figures are cached). Drawn folded on every rerun, a 16-token
sentence's table was 289 markdown cells (4,225 at 64 tokens), about a fifth of the
attention view's page elements; the browser's CPU per page load fell by 0.1-0.4 s of
about 2 s in tries on the 2-core machine, within its noise."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from viz import style

TABLE_MAX_T = 64  # an HTML table up to 64 × 64 cells; longer: the sortable dataframe
LABEL = "Show the numbers"


def frame(weights: np.ndarray, tokens: list[str]) -> pd.DataFrame:
    """The (T, T) ``weights`` as a table: one row per query, one column per key, both
    named by their position and token (``"3·the"``), weights to 3 decimals."""
    labels = [label.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
              for label in style.token_labels(tokens)]  # fmt: skip
    table = pd.DataFrame(np.round(np.asarray(weights, dtype=float), 3), columns=labels)
    table.insert(0, "query ↓ / key →", labels)
    return table


def key_of(figure_key: str) -> str:
    """The widget key of the expander under the figure keyed ``figure_key`` (its open or
    closed state, kept across reruns: a student who opened it sees the next head's)."""
    return f"{figure_key}_numbers"


def show(weights: np.ndarray, tokens: list[str], what: str, figure_key: str) -> None:
    """The expander "Show the numbers" under the figure keyed ``figure_key``, with
    ``weights`` (T, T) as a table while it is open; ``what`` says what the cells are (its
    caption)."""
    box = st.expander(LABEL, icon=":material/table:", key=key_of(figure_key), on_change="rerun")
    with box:
        st.caption(f"{what}: row = query, column = key, the same numbers as the heatmap.")
        if not box.open:
            return
        table = frame(weights, tokens)
        if len(tokens) <= TABLE_MAX_T:
            st.table(table, hide_index=True)
        else:
            st.dataframe(table, hide_index=True)
