"""Showing figures: one place for the plotly toolbar settings."""

from __future__ import annotations

import streamlit as st

# Toolbar: PNG download at 2x for projectors; the camera menu also offers SVG via the browser.
PLOT_CONFIG = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 2}}


def plot(fig, key: str | None = None) -> None:
    """A plotly figure, full width, with the download toolbar."""
    st.plotly_chart(fig, config=PLOT_CONFIG, key=key)
