"""One browser session of a Streamlit 1.67 app, over Streamlit's own websocket protocol.

What the browser does, without a browser: connect to ``/_stcore/stream`` (subprotocol
``streamlit``), send ``BackMsg.rerun_script`` (a ``ClientState``: the URL's query
string, the page, the widget values) and read ``ForwardMsg`` protobufs until
``script_finished``. On the way it keeps what the browser keeps:

* the page (``new_session.page_script_hash``, e.g. after ``st.switch_page``) and the
  URL's query string (``page_info_changed``), sent back with every rerun, as the
  browser sends ``window.location.search``;
* the widgets of the last run, read from the deltas: kind, id (``$$ID-<hash>-<key>``),
  label, options, the value on screen, the query parameter a widget is bound to
  (``bind="query-params"``) and the fragment it belongs to;
* the value of every widget this session changed, sent again with every rerun (the
  browser sends every widget's value; a widget the client leaves out keeps its value
  on the server);
* a widget drawn inside an ``st.fragment`` reruns that fragment only (``fragment_id``),
  and its run's deltas update the elements of the full run.

How 1.67 takes them (``runtime/state/session_state.py``, ``scriptrunner/script_runner.py``):
each rerun's query string becomes ``st.query_params`` for that run; a widget bound with
``bind="query-params"`` is seeded from the URL when it first appears, after which a value
in ``widget_states`` wins, and it is the browser, not the server, that writes such a
widget's new value into its URL (this client does the same); ``st.query_params`` written
by the script come back as ``page_info_changed``.

Widgets are found by label or by key (``bench/stwidgets.py``), so the client does not
depend on the layout. Source of the protocol: ``streamlit/proto/{BackMsg,ClientState,ForwardMsg,WidgetStates}.proto``
and ``streamlit/web/server/starlette/starlette_websocket.py`` of streamlit 1.67.
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.parse
from dataclasses import dataclass, field

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.Element_pb2 import Element
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.asyncio.client import ClientConnection, connect

from bench.stwidgets import Widget, plotly_array, pushed, widget_of

__all__ = ["Run", "Session", "Widget", "plotly_array", "widget_of"]

EARLY_FOR_RERUN = ForwardMsg.ScriptFinishedStatus.Value("FINISHED_EARLY_FOR_RERUN")
FINISHED = {  # a whole run, or a fragment's
    ForwardMsg.ScriptFinishedStatus.Value("FINISHED_SUCCESSFULLY"),
    ForwardMsg.ScriptFinishedStatus.Value("FINISHED_FRAGMENT_RUN_SUCCESSFULLY"),
}
MAIN, SIDEBAR = 0, 1  # the first index of a delta path


@dataclass
class Run:
    """One script run as the session saw it."""

    ms: float  # BackMsg sent -> script_finished received (milliseconds)
    status: int  # ForwardMsg.ScriptFinishedStatus
    elements: dict[tuple[int, ...], tuple[Element, str]]  # delta path -> (element, fragment id)
    query_string: str
    sent: dict[str, WidgetState]  # widget id -> the value this client held during the run

    @property
    def finished(self) -> bool:
        """Whether the run (or the fragment's run) reached the end of the script."""
        return self.status in FINISHED

    def widgets(self) -> list[Widget]:
        """Every widget drawn, in delta-path order (main area first, then sidebar)."""
        out = []
        for path in sorted(self.elements):
            element, fragment = self.elements[path]
            proto = getattr(element, element.WhichOneof("type") or "", None)
            held = self.sent.get(getattr(proto, "id", None))
            if (w := widget_of(element, fragment, held)) is not None:
                out.append(w)
        return out

    def widget(self, *names: str) -> Widget:
        """The one widget labelled, else keyed, by the first of ``names`` that matches.

        Raises:
            LookupError: when none matches, or several share a label or key.
        """
        everything = self.widgets()
        for name in names:
            for match in (
                [w for w in everything if w.label == name],
                [w for w in everything if w.key == name],
            ):
                if len(match) > 1:
                    raise LookupError(f"{len(match)} widgets named {name!r}")
                if match:
                    return match[0]
        raise LookupError(
            f"no widget {' or '.join(map(repr, names))}; widgets: {[w.label for w in everything]}"
        )

    def plotly(self, key: str | None = None) -> dict:
        """The spec of the plotly chart keyed ``key`` (element id ``...-<key>``), else the
        first plotly chart of the main area.

        Raises:
            LookupError: when the run drew no such chart.
        """
        charts = [
            (path, e.plotly_chart)
            for path, (e, _) in sorted(self.elements.items())
            if e.WhichOneof("type") == "plotly_chart" and path[0] == MAIN
        ]
        keyed = [c for _, c in charts if key and c.id.endswith(f"-{key}")]
        chosen = keyed or [c for _, c in charts]
        if not chosen:
            raise LookupError(f"no plotly chart {key or ''} in this run")
        return json.loads(chosen[0].spec)

    def exceptions(self) -> list[str]:
        """Messages of the exceptions the run showed (``st.exception`` / uncaught)."""
        return [
            f"{e.exception.type}: {e.exception.message}"
            for e, _ in self.elements.values()
            if e.WhichOneof("type") == "exception"
        ]


@dataclass
class Session:
    """One browser session: ``await open()``, then ``await set(name, value)`` per change.

    ``query`` is the URL's query (a dict or an encoded string), ``page`` the URL path
    after the host (``""`` for the default page), ``headers`` what the browser sends with
    the websocket's upgrade request besides (its cookies, for a proxy's sticky sessions).
    Use ``async with Session(...)``.
    """

    ws_url: str
    query: dict | str = ""
    page: str = ""
    timeout_s: float = 120.0
    headers: dict = field(default_factory=dict)  # sent with the websocket's upgrade (Cookie)
    query_string: str = field(init=False, default="")
    page_script_hash: str = field(init=False, default="")
    last: Run | None = field(init=False, default=None)
    _ws: ClientConnection | None = field(init=False, default=None, repr=False)
    _values: dict = field(init=False, default_factory=dict, repr=False)

    async def __aenter__(self) -> Session:
        self.query_string = (
            self.query if isinstance(self.query, str) else urllib.parse.urlencode(self.query)
        )
        self._ws = await connect(
            self.ws_url,
            subprotocols=["streamlit"],
            max_size=None,
            additional_headers=self.headers or None,
        )
        self._reader = asyncio.create_task(self._read())
        self._pending: asyncio.Future | None = None
        self._elements: dict = {}
        self._fragment = ""
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the websocket (the server ends the session)."""
        if self._ws is not None:
            await self._ws.close()
            self._reader.cancel()
            self._ws = None

    async def open(self) -> Run:
        """The first run: what loading the page's URL does."""
        return await self.rerun(page_name=self.page)

    async def set(self, name: str | tuple[str, ...], value) -> Run:
        """Change one widget (by label or key, or the first of several names that
        matches: see :meth:`Run.widget`) to ``value`` and rerun."""
        if self.last is None:
            raise RuntimeError("open() the page first")
        w = self.last.widget(*((name,) if isinstance(name, str) else name))
        self._values[w.id] = w.state(value)
        if w.query_param_key:  # the browser writes a bound widget's value into its URL
            self._set_query(w.query_param_key, value)
        return await self.rerun(fragment_id=w.fragment_id)

    async def rerun(self, page_name: str = "", fragment_id: str = "") -> Run:
        """Send ``rerun_script`` with this session's state; the finished run.

        Raises:
            TimeoutError: when no ``script_finished`` came within ``timeout_s``.
            ConnectionError: when the server closed the websocket.
        """
        msg = BackMsg()
        state = msg.rerun_script
        state.query_string = self.query_string
        state.page_script_hash = self.page_script_hash
        state.page_name = page_name
        state.fragment_id = fragment_id
        state.widget_states.widgets.extend(self._values.values())
        self._fragment = fragment_id
        self._pending = asyncio.get_running_loop().create_future()
        start = time.perf_counter()
        await self._ws.send(msg.SerializeToString())
        try:
            status, end = await asyncio.wait_for(self._pending, self.timeout_s)
        except asyncio.TimeoutError:
            raise TimeoutError(f"no script_finished within {self.timeout_s:.0f} s") from None
        sent = dict(self._values)
        self.last = Run((end - start) * 1e3, status, dict(self._elements), self.query_string, sent)
        self._sync_values(self.last)
        return self.last

    async def flood(self, label: str, rate: float, seconds: float, word: str = "flood") -> int:
        """Send ``rate`` ``rerun_script`` messages a second for ``seconds`` without waiting
        for any answer, each with the text widget ``label`` set to "<word> <n>" (a client
        that floods the server: issue #25's attacker); how many were sent."""
        text = self.last.widget("text", label)
        sent, start = 0, time.monotonic()
        while (elapsed := time.monotonic() - start) < seconds:
            if sent < elapsed * rate:
                msg = BackMsg()
                msg.rerun_script.query_string = self.query_string
                msg.rerun_script.page_script_hash = self.page_script_hash
                msg.rerun_script.widget_states.widgets.append(text.state(f"{word} {sent}"))
                await self._ws.send(msg.SerializeToString())
                sent += 1
            else:
                await asyncio.sleep(0.002)
        return sent

    def _set_query(self, key: str, value) -> None:
        pairs = [(k, v) for k, v in urllib.parse.parse_qsl(self.query_string) if k != key]
        self.query_string = urllib.parse.urlencode(pairs + [(key, str(value))])

    def _sync_values(self, run: Run) -> None:
        """A value the server pushed (``set_value``) replaces the one this client holds,
        as the browser's widget manager does."""
        for element, fragment in run.elements.values():
            w = widget_of(element, fragment)
            if w is None or w.id not in self._values or not pushed(element):
                continue
            try:
                self._values[w.id] = w.state(w.value)
            except ValueError:  # a value outside the options: keep what was sent
                pass

    async def _read(self) -> None:
        try:
            async for data in self._ws:
                self._on(data, time.perf_counter())
        except Exception as exc:  # the connection ended: fail whoever waits
            self._fail(ConnectionError(f"websocket closed: {exc!r}"))
            return
        self._fail(ConnectionError("websocket closed by the server"))

    def _fail(self, exc: Exception) -> None:
        if self._pending is not None and not self._pending.done():
            self._pending.set_exception(exc)

    def _on(self, data: bytes, now: float) -> None:
        """Apply one ForwardMsg to this session's state."""
        msg = ForwardMsg()
        msg.ParseFromString(data)
        kind = msg.WhichOneof("type")
        if kind == "new_session":  # a script run starts (a fragment run keeps the page)
            self.page_script_hash = msg.new_session.page_script_hash
            if not self._fragment:
                self._elements = {}
        elif kind == "page_info_changed":
            self.query_string = msg.page_info_changed.query_string
        elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            path = tuple(msg.metadata.delta_path)
            self._elements[path] = (msg.delta.new_element, msg.delta.fragment_id)
        elif kind == "ref_hash":  # only sent for hashes the client said it has cached
            self._fail(RuntimeError("the server sent a cached-message reference"))
        elif kind == "script_finished" and msg.script_finished != EARLY_FOR_RERUN:
            if self._pending is not None and not self._pending.done():
                self._pending.set_result((msg.script_finished, now))
