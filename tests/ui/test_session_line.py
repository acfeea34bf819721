"""Issue #50: new sessions' first runs wait in one server-wide line (``ui.session_line``).

The line runs on a real asyncio event loop, as it does inside Streamlit's runtime; the
runtime's ``handle_backmsg`` is replaced by a recorder of what was delivered and when.
The served server's side (16 connections opening and closing sessions while another
student answers) is ``tests/e2e/test_fair_share.py``.
"""

from __future__ import annotations

import asyncio
import time

from streamlit.proto.BackMsg_pb2 import BackMsg

from bench.fairshare import LINE_BURST, LINE_PER_S
from ui.session_line import SESSION_BURST, SESSIONS_PER_S, SessionLine


def _rerun(query: str = "") -> BackMsg:
    msg = BackMsg()
    msg.rerun_script.query_string = query
    return msg


def _line(rate: float, burst: int, closed: set[str] = frozenset()):
    delivered: list[tuple[str, str, float]] = []
    start = time.monotonic()

    def handle(session_id, msg, client=None):
        delivered.append((session_id, msg.rerun_script.query_string, time.monotonic() - start))

    return SessionLine(handle, lambda sid: sid not in closed, rate, burst), delivered


def test_a_burst_passes_then_new_sessions_wait_in_order_at_the_rate():
    async def run():
        line, delivered = _line(rate=20.0, burst=2)
        for i in range(6):
            line(f"s{i}", _rerun())
        assert [d[0] for d in delivered] == ["s0", "s1"] and line.waiting() == 4
        await asyncio.sleep(0.4)
        return line, delivered

    line, delivered = asyncio.run(run())
    assert [d[0] for d in delivered] == [f"s{i}" for i in range(6)]  # first come, first served
    # 20 a second: the k-th in line starts no sooner than (k + 1) x 50 ms after the bucket
    # was full. Not each gap: a token bucket lets a late start's successor catch up (beside
    # two busy loops, gaps of 50, 61 and 38 ms), never run ahead of the rate.
    times = [t for _, _, t in delivered[2:]]
    assert all(t >= (k + 1) / 20 - 1e-3 for k, t in enumerate(times)), times
    assert line.waited == 4 and line.waiting() == 0


def test_a_started_session_and_other_messages_pass_untouched():
    async def run():
        line, delivered = _line(rate=1.0, burst=1)
        line("a", _rerun("1"))
        line("a", _rerun("2"))  # its second run: no wait
        line("b", _rerun("1"))  # waits
        other = BackMsg()
        other.load_git_info = True
        line("b", other)  # not a rerun: passes
        return delivered

    delivered = asyncio.run(run())
    assert [(s, q) for s, q, _ in delivered] == [("a", "1"), ("a", "2"), ("b", "")]


def test_a_closed_session_is_skipped_and_a_waiting_one_keeps_its_place_with_its_latest_state():
    closed = {"gone"}

    async def run():
        line, delivered = _line(rate=10.0, burst=1, closed=closed)
        line("first", _rerun())
        line("gone", _rerun())
        line("next", _rerun("old"))
        line("next", _rerun("new"))  # the page changed while it waited
        await asyncio.sleep(0.6)
        return delivered

    delivered = asyncio.run(run())
    assert [(s, q) for s, q, _ in delivered] == [("first", ""), ("next", "new")]
    assert delivered[1][2] < 0.19  # "gone" spent no token: "next" came one interval later


def test_the_bench_records_the_server_s_rate():
    assert (LINE_PER_S, LINE_BURST) == (SESSIONS_PER_S, SESSION_BURST)
