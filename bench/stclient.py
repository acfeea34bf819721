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
import os
import time
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass, field

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.asyncio.client import ClientConnection, connect

from bench.stwidgets import Run, Widget, plotly_array, pushed, widget_of

__all__ = ["Run", "Session", "Widget", "plotly_array", "widget_of"]


def _xsrf_token() -> str:
    """A version-2 XSRF token (``2|mask|masked token|timestamp``, Tornado's format, which
    Streamlit 1.67 decodes): the upload route compares the header's token with the
    cookie's, so a client may send the same fresh token in both (double submit)."""
    import binascii

    token, mask = os.urandom(16), os.urandom(4)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(token))
    hexed = [binascii.b2a_hex(x).decode() for x in (mask, masked)]
    return f"2|{hexed[0]}|{hexed[1]}|{int(time.time())}"


EARLY_FOR_RERUN = ForwardMsg.ScriptFinishedStatus.Value("FINISHED_EARLY_FOR_RERUN")


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
    session_id: str = field(init=False, default="")  # the server's, from new_session
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
        self._file_urls: dict[str, asyncio.Future] = {}  # request id -> FileURLs list
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

    async def click(self, name: str | tuple[str, ...]) -> Run:
        """Click the button ``name`` (label or key) once: a rerun whose trigger value is set
        for that run only, as the browser sends it."""
        if self.last is None:
            raise RuntimeError("open() the page first")
        w = self.last.widget(*((name,) if isinstance(name, str) else name))
        if w.kind != "button":
            raise ValueError(f"{w.label!r} is a {w.kind}, not a button")
        return await self.rerun(
            fragment_id=w.fragment_id, trigger=WidgetState(id=w.id, trigger_value=True)
        )

    async def upload(self, name: str | tuple[str, ...], files: dict[str, bytes]) -> Run:
        """Put ``files`` (file name -> bytes) into the file uploader ``name`` and rerun, as
        the browser does: ask the server for upload URLs (``file_urls_request``), PUT each
        file there (multipart, with the double-submit XSRF cookie and header), then send the
        uploader's ``FileUploaderState``.

        Raises:
            urllib.error.HTTPError: when the server refuses a file (e.g. 413, too large).
        """
        if self.last is None:
            raise RuntimeError("open() the page first")
        w = self.last.widget(*((name,) if isinstance(name, str) else name))
        request_id = uuid.uuid4().hex
        waiting = self._file_urls[request_id] = asyncio.get_running_loop().create_future()
        msg = BackMsg()
        msg.file_urls_request.request_id = request_id
        msg.file_urls_request.session_id = self.session_id
        msg.file_urls_request.file_names.extend(files)
        await self._ws.send(msg.SerializeToString())
        try:
            urls = await asyncio.wait_for(waiting, self.timeout_s)
        finally:
            self._file_urls.pop(request_id, None)
        state = WidgetState(id=w.id)
        for (file_name, data), url in zip(files.items(), urls, strict=True):
            await asyncio.to_thread(self._put, url.upload_url, file_name, data)
            info = state.file_uploader_state_value.uploaded_file_info.add()
            info.file_id, info.name, info.size = url.file_id, file_name, len(data)
            info.file_urls.CopyFrom(url)
        self._values[w.id] = state
        return await self.rerun(fragment_id=w.fragment_id)

    def _put(self, path: str, file_name: str, data: bytes) -> None:
        """PUT one file to the server's upload route (``path`` is server-relative)."""
        base = self.ws_url.replace("ws://", "http://", 1).replace("wss://", "https://", 1)
        base = base.removesuffix("/_stcore/stream")
        token = _xsrf_token()
        boundary = uuid.uuid4().hex
        part = f'form-data; name="file"; filename="{file_name}"'
        head = f"--{boundary}\r\nContent-Disposition: {part}\r\n\r\n".encode()
        body = head + data + f"\r\n--{boundary}--\r\n".encode()
        headers = {
            "Content-Type": f"multipart/form-data; boundary={boundary}",
            "X-Xsrftoken": token,
            "Cookie": f"_streamlit_xsrf={token}",
        }
        if cookie := self.headers.get("Cookie"):
            headers["Cookie"] += f"; {cookie}"
        req = urllib.request.Request(base + path, data=body, method="PUT", headers=headers)
        with urllib.request.urlopen(req, timeout=self.timeout_s) as reply:
            reply.read()

    async def rerun(
        self, page_name: str = "", fragment_id: str = "", trigger: WidgetState | None = None
    ) -> Run:
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
        if trigger is not None:  # a button: set for this run only
            state.widget_states.widgets.append(trigger)
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
            self.session_id = msg.new_session.initialize.session_id or self.session_id
            if not self._fragment:
                self._elements = {}
        elif kind == "page_info_changed":
            self.query_string = msg.page_info_changed.query_string
        elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            path = tuple(msg.metadata.delta_path)
            self._elements[path] = (msg.delta.new_element, msg.delta.fragment_id)
        elif kind == "file_urls_response":
            waiting = self._file_urls.get(msg.file_urls_response.response_id)
            if waiting is not None and not waiting.done():
                waiting.set_result(list(msg.file_urls_response.file_urls))
        elif kind == "ref_hash":  # only sent for hashes the client said it has cached
            self._fail(RuntimeError("the server sent a cached-message reference"))
        elif kind == "script_finished" and msg.script_finished != EARLY_FOR_RERUN:
            if self._pending is not None and not self._pending.done():
                self._pending.set_result((msg.script_finished, now))
