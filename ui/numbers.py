"""A heatmap's numbers as a table a screen reader can read (#44 item 13): its text
alternative, folded under "Show the numbers" beneath the figure."""

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


def show(weights: np.ndarray, tokens: list[str], what: str) -> None:
    """The expander "Show the numbers" with ``weights`` (T, T) as a table; ``what`` says
    what the cells are (its caption)."""
    with st.expander(LABEL, icon=":material/table:"):
        st.caption(f"{what}: row = query, column = key, the same numbers as the heatmap.")
        table = frame(weights, tokens)
        if len(tokens) <= TABLE_MAX_T:
            st.table(table, hide_index=True)
        else:
            st.dataframe(table, hide_index=True)
