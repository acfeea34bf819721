""" "Check yourself": the course's review questions on the lesson pages, each answer
hidden until asked and built from what the page measures or shows."""

from __future__ import annotations

import streamlit as st


def check_yourself(question: str, answer: str, key: str) -> None:
    """A review question; its answer (markdown) appears only after "Show the answer"."""
    st.markdown(f"**Check yourself.** {question}")
    if st.toggle("Show the answer", key=f"check_{key}"):
        st.success(answer, icon=":material/lightbulb:")
