"""Showing figures: one place for the plotly toolbar settings."""

from __future__ import annotations

import streamlit as st

# Toolbar: the camera button downloads a PNG at 2x resolution (sharp on projectors and slides).
PLOT_CONFIG = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 2}}


def plot(fig, key: str | None = None) -> None:
    """A plotly figure, full width, with the download toolbar.

    ``theme=None``: the figure keeps the near-black, projector-sized fonts of
    ``viz.style`` instead of Streamlit's grey theme.
    """
    st.plotly_chart(fig, config=PLOT_CONFIG, key=key, theme=None)
