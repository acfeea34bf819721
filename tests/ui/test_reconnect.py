"""ui/reconnect.py: which handshake names a lost session (the browser test of the notice
itself is tests/deploy/test_failover.py)."""

from __future__ import annotations

from ui.reconnect import previous_session_id


def test_the_third_subprotocol_entry_is_the_session_asked_for():
    assert previous_session_id("streamlit, 2|ab|cd|1, 0b7b5339-10c5") == "0b7b5339-10c5"
    assert previous_session_id("streamlit, 2|ab|cd|1") is None  # a first visit
    assert previous_session_id("streamlit, PLACEHOLDER_AUTH_TOKEN, ") is None
    assert previous_session_id(None) is None and previous_session_id("") is None
