"""Fair share (issue #25): one student floods the server, another measures its own reruns.

A real ``streamlit run app.py`` (``bench/server.py``). The attacker is one websocket
client (``bench/stclient.py``) that opens the visualizer, then sends ``rerun_script``
BackMsgs at ``rate`` per second, each with a new sentence, without waiting for any answer
(what a ten-line script does). The other student's session alternates a layer/head change
and a new sentence and times each rerun (BackMsg sent -> ``script_finished``), first alone
(its baseline) and then during the flood; a new session is opened during the flood and
after it (seconds to its first finished run). Server RSS before and after is read on
the server's pid.
"""

from __future__ import annotations

import asyncio
import time

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from bench.server import Server, serve
from bench.stclient import Session

QUERY = {"model": "softmax", "view": "attention", "text": "the cat sat on the mat"}
SENTENCES = ("the keys to the cabinet are on the table", "mary gave a drink to john")


async def _student(server: Server, seconds: float) -> list[float]:
    """Reruns (ms) of one session for ``seconds``: head changes and new sentences."""
    out: list[float | None] = []
    try:
        async with Session(server.ws_url, dict(QUERY), timeout_s=60) as s:
            await s.open()
            i, end = 0, time.monotonic() + seconds
            while time.monotonic() < end:
                if i % 2:
                    run = await s.set(("text", "Type a sentence"), f"{SENTENCES[i // 2 % 2]} {i}")
                else:
                    run = await s.set(("Head", "head"), str((i // 2) % 4))
                out.append(run.ms)
                i += 1
                await asyncio.sleep(0.1)
    except (TimeoutError, ConnectionError, OSError):
        out.append(None)  # no answer within 60 s, or no websocket
    return out


async def open_s(server: Server, timeout_s: float = 60) -> float | None:
    """Seconds from connecting a new session to its first finished run (None: not within
    ``timeout_s``, or the websocket did not open)."""
    start = time.perf_counter()
    try:
        async with asyncio.timeout(timeout_s):
            async with Session(server.ws_url, dict(QUERY), timeout_s=timeout_s) as s:
                await s.open()
    except (TimeoutError, ConnectionError, OSError):
        return None
    return time.perf_counter() - start


class _Watched(Session):
    """A session that also keeps every toast it was sent (they last one run)."""

    toasts: list[str]

    def _on(self, data: bytes, now: float) -> None:
        super()._on(data, now)
        msg = ForwardMsg()
        msg.ParseFromString(data)
        if msg.WhichOneof("type") == "delta" and msg.delta.WhichOneof("type") == "new_element":
            if msg.delta.new_element.WhichOneof("type") == "toast":
                self.toasts = [*getattr(self, "toasts", []), msg.delta.new_element.toast.body]


async def _flood(server: Server, rate: float, seconds: float) -> int:
    """One client sending ``rate`` rerun_script messages per second; how many it sent."""
    async with _Watched(server.ws_url, dict(QUERY), timeout_s=120) as s:
        await s.open()
        text = s.last.widget("text", "Type a sentence")
        sent, start = 0, time.monotonic()
        while (elapsed := time.monotonic() - start) < seconds:
            if sent < elapsed * rate:
                msg = BackMsg()
                msg.rerun_script.query_string = s.query_string
                msg.rerun_script.page_script_hash = s.page_script_hash
                msg.rerun_script.widget_states.widgets.append(text.state(f"flood word {sent}"))
                await s._ws.send(msg.SerializeToString())
                sent += 1
            else:
                await asyncio.sleep(0.002)
        await s.rerun()  # the attacker's page after the flood
        return sent, getattr(s, "toasts", [])


async def flood_case(server: Server, rate: float, seconds: float) -> dict:
    """Baseline, then the flood with the other student measuring and a new session."""
    rss0 = server.rss_mb()
    base = await _student(server, 6)
    flood = asyncio.create_task(_flood(server, rate, seconds))
    await asyncio.sleep(1)
    other = asyncio.create_task(_student(server, seconds - 3))
    await asyncio.sleep(seconds / 2)
    during_open = await open_s(server)
    sent, toasts = await flood
    during = await other
    after_open = await open_s(server)
    return {
        "rate": rate,
        "sent": sent,
        "attacker_saw": toasts,
        "base_max_ms": round(max(base)),
        "max_ms": None if None in during or not during else round(max(during)),
        "reruns": len(during),
        "open_during_s": None if during_open is None else round(during_open, 2),
        "open_after_s": None if after_open is None else round(after_open, 2),
        "rss_before_mb": round(rss0),
        "rss_after_mb": round(server.rss_mb()),
    }


def main() -> None:
    import json
    import sys

    rate = float(sys.argv[1]) if len(sys.argv) > 1 else 500.0
    with serve() as server:
        asyncio.run(open_s(server))
        print(json.dumps(asyncio.run(flood_case(server, rate, 20.0))))


if __name__ == "__main__":
    main()
