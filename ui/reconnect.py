"""One line for a browser whose session the server no longer has.

A Streamlit session lives in one server's memory. When its server restarts, or a
replica dies and the proxy moves the browser to another one (``deploy/nginx.conf``),
the page reconnects by itself, and its websocket handshake names the session it had
(Streamlit 1.67's frontend sends its last session id as the third entry of
``Sec-WebSocket-Protocol``; ``web/server/starlette/starlette_websocket.py`` reads it).
A server that does not know that id opens a new session: the page is drawn again from
its link and its widgets' values, but an upload, which lived in the old server's
memory, is gone. :func:`notice` says so, once, on the new session's first run.

That first run needs the page to ask for it: on a reconnect, Streamlit's frontend
requests a script run only when the page has a fragment that reruns on a timer (its
``handleConnectionStateChanged``); otherwise it waits for the next click, and the page
would say nothing until then. :func:`notice` draws one such fragment, empty, every
``TIMER`` (a day: it never runs in a lesson).
"""

from __future__ import annotations

from datetime import timedelta

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from ui.notices import say

NOTICE = (
    "This page's session was lost on the server (it restarted, or the tab was away too "
    "long) and the page was opened again from its link: an upload, if you made one, must "
    "be made again."
)
ICON = ":material/restart_alt:"
_CHECKED = "_reconnect_checked"
TIMER = timedelta(days=1)


@st.fragment(run_every=TIMER)
def _rerun_on_reconnect() -> None:
    """Nothing: its timer makes the frontend rerun the page when it reconnects."""


def previous_session_id(protocols: str | None) -> str | None:
    """The session id a reconnecting page asked for: the third comma-separated entry of
    its ``Sec-WebSocket-Protocol`` header (``streamlit, <xsrf token>, <session id>``),
    or None (a first visit: two entries, or no header)."""
    entries = [e.strip() for e in (protocols or "").split(",")]
    return entries[2] if len(entries) >= 3 and entries[2] else None


def lost_session() -> bool:
    """True when this session was opened by a page that asked for another one."""
    ctx = get_script_run_ctx()
    # No websocket (AppTest): no header, None.
    asked = previous_session_id(st.context.headers.get("Sec-WebSocket-Protocol"))
    return bool(ctx is not None and asked and asked != ctx.session_id)


def notice() -> None:
    """The one-line warning, on the first run of a session that replaced a lost one
    (call it on every run: it also draws the fragment that makes a reconnect rerun)."""
    _rerun_on_reconnect()
    if _CHECKED in st.session_state:
        return
    st.session_state[_CHECKED] = True
    if lost_session():
        say("warning", NOTICE, icon=ICON)
