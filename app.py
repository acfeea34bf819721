"""Attention visualizer: ``streamlit run app.py``. Composes the pages, nothing else."""

import streamlit as st

from ui import visualizer

st.set_page_config(page_title="Attention visualizer", page_icon="🔍", layout="wide")
page = st.navigation(
    [st.Page(visualizer.page, title="Visualizer", icon="🔍", url_path="visualizer", default=True)]
)
page.run()
