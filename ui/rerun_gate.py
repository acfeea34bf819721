"""Fair scheduling of reruns: each session's ``rerun_script`` messages pass a token bucket.

Streamlit hands every BackMsg a browser sends to ``Runtime.handle_backmsg`` on the
server's event loop; a ``rerun_script`` stops the session's running script and starts it
again. One client sending hundreds a second (a ten-line script) kept the server busy
restarting its script: another session got no answer within 60 s and a new tab could not
open its websocket (issue #25).

:class:`RerunGate` wraps that method: a session may start ``RATE_PER_S`` reruns a second
(bursts of ``BURST``). Past it the messages are coalesced: the latest one waits and is
delivered when the bucket allows; an earlier waiting one is dropped. Every message
carries the whole client state (every widget's value, the query string), so the latest
one is what the student last did: nothing they did is lost, it only comes later. Two
waiting messages for different fragments become one full rerun. Other BackMsgs pass
untouched. All of it runs on the event loop thread, as ``handle_backmsg`` does.
"""

from __future__ import annotations

import asyncio
import time
import urllib.parse
from dataclasses import dataclass, field

from streamlit.proto.BackMsg_pb2 import BackMsg

# Streamlit drops a query string longer than 512 Ki characters whole (the page then opens
# on its defaults without a word): longer values are cut here first, and the page told.
LONG_QUERY_CHARS = 64 * 1024
MAX_VALUE_CHARS = 2_000  # a value of a long query string is cut to this (ui.link's cap)
RATE_PER_S = 4.0  # reruns a session may start per second, sustained
BURST = 8  # reruns a session may start at once (a student clicking quickly)
FORGET_S = 60.0  # a session's bucket is forgotten after this long without a message


@dataclass
class _Bucket:
    tokens: float = BURST
    at: float = field(default_factory=time.monotonic)
    waiting: tuple[BackMsg, object] | None = None  # (message, client) delivered later
    timer: asyncio.TimerHandle | None = None
    coalesced: int = 0  # messages dropped for a later one, in all

    def refill(self, now: float) -> None:
        self.tokens = min(BURST, self.tokens + (now - self.at) * RATE_PER_S)
        self.at = now


class RerunGate:
    """``Runtime.handle_backmsg`` with a token bucket per session on ``rerun_script``.

    Args:
        handle: the runtime's own ``handle_backmsg(session_id, msg, client=...)``.
    """

    def __init__(self, handle):
        self._handle = handle
        self._buckets: dict[str, _Bucket] = {}
        self._swept = time.monotonic()
        self.cut: dict[str, dict[str, int]] = {}  # session -> query key -> its length before

    def coalesced(self, session_id: str) -> int:
        """How many of this session's rerun messages were replaced by a later one."""
        bucket = self._buckets.get(session_id)
        return 0 if bucket is None else bucket.coalesced

    def __call__(self, session_id: str, msg: BackMsg, *, client=None) -> None:
        if msg.WhichOneof("type") != "rerun_script":
            return self._handle(session_id, msg, client=client)
        state = msg.rerun_script
        if len(state.query_string) > LONG_QUERY_CHARS:
            state.query_string, self.cut[session_id] = shortened(state.query_string)
        now = time.monotonic()
        self._sweep(now)
        bucket = self._buckets.setdefault(session_id, _Bucket())
        bucket.refill(now)
        if bucket.waiting is None and bucket.tokens >= 1:
            bucket.tokens -= 1
            return self._handle(session_id, msg, client=client)
        if bucket.waiting is not None:
            bucket.coalesced += 1
            msg = _merged(bucket.waiting[0], msg)
        bucket.waiting = (msg, client)
        if bucket.timer is None:
            delay = (1 - bucket.tokens) / RATE_PER_S
            loop = asyncio.get_running_loop()
            bucket.timer = loop.call_later(delay, self._release, session_id)
        return None

    def _release(self, session_id: str) -> None:
        """The bucket has a token again: deliver the waiting message."""
        bucket = self._buckets.get(session_id)
        if bucket is None or bucket.waiting is None:
            return
        msg, client = bucket.waiting
        bucket.waiting, bucket.timer = None, None
        bucket.refill(time.monotonic())
        bucket.tokens = max(0.0, bucket.tokens - 1)
        try:
            self._handle(session_id, msg, client=client)
        except Exception:  # noqa: BLE001 - a stopped runtime or a closed session: nothing to do
            pass

    def _sweep(self, now: float) -> None:
        """Forget the buckets of sessions quiet for ``FORGET_S`` (closed tabs)."""
        if now - self._swept < FORGET_S:
            return
        self._swept = now
        for sid in [s for s, b in self._buckets.items() if b.waiting is None]:
            if now - self._buckets[sid].at > FORGET_S:
                del self._buckets[sid]
                self.cut.pop(sid, None)


def shortened(query: str) -> tuple[str, dict[str, int]]:
    """``query`` with every value longer than ``MAX_VALUE_CHARS`` cut to that, and each
    cut key's length before; ("", {}) for a query string that cannot be read."""
    try:
        pairs = urllib.parse.parse_qsl(query, keep_blank_values=True, max_num_fields=100)
    except ValueError:
        return "", {}
    cut = {k: len(v) for k, v in pairs if len(v) > MAX_VALUE_CHARS}
    short = [(k[:MAX_VALUE_CHARS], v[:MAX_VALUE_CHARS]) for k, v in pairs]
    return urllib.parse.urlencode(short, quote_via=urllib.parse.quote), cut


def cut_lengths() -> dict[str, int]:
    """This session's link values that were cut before Streamlit read them: key -> the
    value's length in the link (read once: the dict is emptied)."""
    from streamlit.runtime import Runtime
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None or not Runtime.exists():
        return {}
    gate = Runtime.instance().handle_backmsg
    return gate.cut.pop(ctx.session_id, {}) if isinstance(gate, RerunGate) else {}


def _merged(earlier: BackMsg, later: BackMsg) -> BackMsg:
    """``later``, as a full rerun when ``earlier`` reran another part (a fragment or the
    whole script): the whole script then runs once with the latest state."""
    if earlier.rerun_script.fragment_id != later.rerun_script.fragment_id:
        later.rerun_script.fragment_id = ""
    return later


def install(runtime) -> RerunGate:
    """Put a :class:`RerunGate` in front of ``runtime.handle_backmsg``, with new sessions'
    first runs in one server-wide line behind it (``ui.session_line``); once per runtime
    (the installed gate is returned on a second call)."""
    from ui.session_line import SessionLine

    current = runtime.handle_backmsg
    if isinstance(current, RerunGate):
        return current
    gate = RerunGate(SessionLine(current, runtime.is_active_session))
    runtime.handle_backmsg = gate
    return gate


NOTICE_SHOWN = "_rerun_gate_notice"  # session state: the notice was shown once


def notice() -> None:
    """In a session whose reruns were coalesced, one toast (once per session) saying why
    its page updates late; nothing elsewhere (no server, no gate, no coalesced message)."""
    import streamlit as st
    from streamlit.runtime import Runtime
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None or not Runtime.exists() or st.session_state.get(NOTICE_SHOWN):
        return
    gate = Runtime.instance().handle_backmsg
    if isinstance(gate, RerunGate) and gate.coalesced(ctx.session_id):
        st.session_state[NOTICE_SHOWN] = True
        st.toast(
            f"Too many requests from this page: it now updates at most {RATE_PER_S:g} "
            "times a second (your latest change is kept).",
            icon=":material/speed:",
        )
