"""New sessions wait in line: a server-wide budget of sessions opened per second.

A session's first run draws the whole page (the default model's analysis, every figure of
the view) on the server's one Python process. A script opening and closing sessions from
16 parallel connections started ~17 such runs a second, and another student's slowest
answer rose to 3.9-8.9 times its baseline (issue #50). The per-session limit
(``ui.rerun_gate``) cannot see it: every one of those sessions is new.

:class:`SessionLine` sits behind :class:`ui.rerun_gate.RerunGate` in front of
``Runtime.handle_backmsg``. The first ``rerun_script`` of a session the server has not run
yet takes a token of one server-wide bucket (``SESSIONS_PER_S``, bursts of
``SESSION_BURST``); without one it waits in line, first come first served, and is
delivered when the bucket allows. A session that closed while it waited is skipped and
costs nothing. Waiting takes no thread and no CPU: a timer on the event loop, which is
where ``handle_backmsg`` runs. Sessions that have run once pass untouched. Per client
(per IP address) the proxy limits connections and their rate (``deploy/nginx.conf``).
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Callable

from streamlit.proto.BackMsg_pb2 import BackMsg

SESSIONS_PER_S = 3.0  # new sessions the server starts per second, all clients together
SESSION_BURST = 10  # new sessions started at once (a group opening the page together)
SWEEP_EVERY_S = 30.0  # sessions that closed are forgotten this often


class SessionLine:
    """``Runtime.handle_backmsg`` with new sessions' first runs in one server-wide line.

    Args:
        handle: the runtime's own ``handle_backmsg(session_id, msg, client=...)``.
        alive: ``session_id -> bool``, whether the session is still connected
            (``Runtime.is_active_session``).
        rate, burst: the bucket (default ``SESSIONS_PER_S``, ``SESSION_BURST``).
    """

    def __init__(
        self,
        handle,
        alive: Callable[[str], bool],
        rate: float = SESSIONS_PER_S,
        burst: int = SESSION_BURST,
    ):
        self._handle, self._alive = handle, alive
        self.rate, self.burst = rate, burst
        self._tokens, self._at = float(burst), time.monotonic()
        self._line: collections.OrderedDict[str, tuple[BackMsg, object]] = collections.OrderedDict()
        self._timer: asyncio.TimerHandle | None = None
        self._started: set[str] = set()
        self._swept = time.monotonic()
        self.waited = 0  # sessions that waited in line, in all

    def __call__(self, session_id: str, msg: BackMsg, *, client=None) -> None:
        if msg.WhichOneof("type") != "rerun_script" or session_id in self._started:
            return self._handle(session_id, msg, client=client)
        if session_id in self._line:  # a waiting page sent a newer state: it keeps its place
            self._line[session_id] = (msg, client)
            return None
        self._refill()
        if not self._line and self._tokens >= 1:
            self._tokens -= 1
            return self._start(session_id, msg, client)
        self._line[session_id] = (msg, client)
        self.waited += 1
        self._schedule()
        return None

    def waiting(self) -> int:
        """Sessions in line now."""
        return len(self._line)

    def _refill(self) -> None:
        now = time.monotonic()
        self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
        self._at = now

    def _start(self, session_id: str, msg: BackMsg, client) -> None:
        self._started.add(session_id)
        self._sweep()
        return self._handle(session_id, msg, client=client)

    def _schedule(self) -> None:
        if self._timer is None and self._line:
            delay = max(0.0, (1 - self._tokens) / self.rate)
            self._timer = asyncio.get_running_loop().call_later(delay, self._release)

    def _release(self) -> None:
        """A token is due: start the first session in line that is still connected."""
        self._timer = None
        self._refill()
        while self._line and self._tokens >= 1:
            session_id, (msg, client) = self._line.popitem(last=False)
            if not self._alive(session_id):
                continue  # it closed while it waited: no token spent
            self._tokens -= 1
            try:
                self._start(session_id, msg, client)
            except Exception:  # noqa: BLE001 - a stopped runtime or a closed session
                pass
        self._schedule()

    def _sweep(self) -> None:
        """Forget the sessions that closed (their ids never come back)."""
        now = time.monotonic()
        if now - self._swept < SWEEP_EVERY_S:
            return
        self._swept = now
        self._started = {s for s in self._started if self._alive(s)}
