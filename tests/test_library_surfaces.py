"""The private parts of streamlit and plotly this project leans on, and the versions they
were checked against: a newer library fails here, in one message that says what to check.

Public APIs change with deprecation warnings; these parts change without notice:

* ``bench/stclient.py`` and ``bench/stwidgets.py`` speak Streamlit's private websocket
  protocol (``/_stcore/stream``, ``BackMsg``/``ForwardMsg`` protobufs, widget ids and
  states as 1.67 sends them); ``deploy/nginx.conf`` proxies that websocket and
  ``/_stcore/`` requests;
* ``tests/helpers/pages.py`` reads ``AppTest._registered_pages`` / sets ``_page_hash``;
* ``ui/server_start.py`` expires closed tabs' sessions in the runtime's session storage
  (``Runtime._session_mgr._session_storage._cache.expire()`` on ``_async_objs.eventloop``);
* ``ui/send_wakeup.py`` replaces the "message queued" callback that the runtime hands
  its session manager (``_message_enqueued_callback``), which hands it to each session;
  it calls ``Runtime._enqueued_some_message`` and reads ``_get_async_objs()``;
* ``ui/chart.js`` takes plotly.js from Streamlit's own ``static/js/PlotlyChart.*.js``
  chunk (importing it sets ``window.Plotly``), beside the app's ``static/js/index.*.js``;
* ``ui/figures.py`` escapes what ``plotly.io._json._swap_orjson`` lists, as plotly.io
  writes a figure (``tests/ui/test_figures.py``).
* ``ui/reconnect.py`` reads the session id a reconnecting page sends (the third entry of
  ``Sec-WebSocket-Protocol``, as ``starlette_websocket._parse_subprotocols`` reads it) and
  relies on the frontend asking for a script run on a reconnect when a fragment has a
  timer (``autoRerunIntervals``); ``ui/link.py`` drops a refused number from the URL and
  reruns, because a bound widget is seeded from the run's first query string
  (``QueryParams.get_initial_value``).
* ``tests/conftest.py`` reads pytest's ``Item._fixtureinfo.name2fixturedefs`` to mark
  slow every test that needs a fixture exporting a model (``SLOW_FIXTURES``);
  ``tests/helpers/xdist_groups.py`` sets ``Item._id`` (a ``_pytest.nodeid.NodeId``) to
  carry a test's ``xdist_group`` to xdist's scheduler (``tests/test_xdist_groups.py``).

After checking them against a new version (``tests/bench/test_live.py`` drives the
websocket client on a real server, ``tests/ui`` the figures), raise ``CHECKED``.
"""

from __future__ import annotations

from importlib.metadata import version

import pytest

from tests.helpers import ROOT

# package -> (major.minor checked, the modules that use its private parts)
CHECKED = {
    "streamlit": (
        "1.67",
        "bench/stclient.py, bench/stwidgets.py (websocket protocol), "
        "tests/helpers/pages.py (AppTest._registered_pages), "
        "deploy/nginx.conf (/_stcore/ paths), ui/server_start.py (the runtime's session "
        "storage, expired on its event loop), ui/send_wakeup.py (the runtime's message "
        "callback, in its session manager and sessions), ui/chart.js (plotly.js from the "
        "PlotlyChart chunk), ui/reconnect.py (the reconnect's session id, the frontend's "
        "rerun on reconnect), ui/link.py (bound widgets seeded from the first query string)",
    ),
    "plotly": (
        "7.1",
        "ui/figures.py (escapes what plotly.io._json._swap_orjson escapes)",
    ),
    "pytest": (
        "9.2",
        "tests/conftest.py (Item._fixtureinfo: the slow tier's fixtures), "
        "tests/helpers/xdist_groups.py (Item._id, _pytest.nodeid.NodeId: xdist_group's "
        "suffix, pytest-dev/pytest-xdist#1386)",
    ),
}


def minor(v: str) -> str:
    return ".".join(v.split(".")[:2])


@pytest.mark.parametrize("package", list(CHECKED))
def test_the_installed_version_is_the_checked_one(package):
    checked, users = CHECKED[package]
    installed = version(package)
    assert minor(installed) == checked, (
        f"{package} {installed} is installed; {users} use private parts of {package} "
        f"{checked}: check them against {installed}, then set CHECKED[{package!r}] in "
        f"tests/test_library_surfaces.py"
    )
    pins = [
        line
        for name in ("requirements.txt", "requirements-dev.txt")
        for line in (ROOT / name).read_text().splitlines()
    ]
    pin = next(line for line in pins if line.startswith(f"{package}=="))
    assert minor(pin.split("==")[1].split()[0]) == checked, (pin, checked)


def test_the_websocket_protocol_has_the_fields_the_client_uses():
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    state = BackMsg().rerun_script
    for name in ("query_string", "page_script_hash", "page_name", "fragment_id"):
        assert hasattr(state, name), f"ClientState.{name} is gone: bench/stclient.py sends it"
    kinds = {f.name for f in ForwardMsg.DESCRIPTOR.oneofs_by_name["type"].fields}
    for kind in ("new_session", "page_info_changed", "delta", "script_finished", "ref_hash"):
        assert kind in kinds, f"ForwardMsg.{kind} is gone: bench/stclient.py reads it"
    for status in ("FINISHED_SUCCESSFULLY", "FINISHED_EARLY_FOR_RERUN"):
        assert ForwardMsg.ScriptFinishedStatus.Value(status) is not None


def test_a_reconnecting_page_names_its_session_and_reruns_when_a_fragment_has_a_timer():
    """``ui/reconnect.py``: the frontend sends ``[streamlit, token, last session id]`` and,
    reconnected, asks for a script run when a fragment reruns on a timer; the server
    reads the third entry as the session to resume."""
    from streamlit.web.server.starlette.starlette_websocket import _parse_subprotocols

    from ui.chart import _STATIC_JS

    (index,) = [
        p.read_text() for p in _STATIC_JS.glob("index.*.js") if "getLastSessionId" in p.read_text()
    ]
    assert "new WebSocket(e,[`streamlit`,...t])" in index, "the subprotocols are sent otherwise"
    assert "getLastSessionId:()=>this.sessionInfo.last?.sessionId" in index
    assert "this.autoRerunIntervals.size>0?(" in index, "no rerun on reconnect for timed fragments"
    headers = {"sec-websocket-protocol": "streamlit, tok, abc"}
    assert _parse_subprotocols(headers) == ("streamlit", "tok", "abc")


def test_streamlit_ships_one_plotly_chunk_that_sets_window_plotly():
    """``ui/chart.js`` imports the chunk ``ui.chart.plotly_chunk()`` names, relative to
    the app's own module script, and reads ``window.Plotly`` after it ran."""
    from ui.chart import _STATIC_JS, plotly_chunk

    chunk = (_STATIC_JS / plotly_chunk()).read_text()
    assert "window.Plotly=" in chunk, "the PlotlyChart chunk no longer sets window.Plotly"
    assert list(_STATIC_JS.glob("index.*.js")), "no static/js/index.*.js beside the chunk"


def test_the_session_storage_expires_as_the_server_sweep_expects():
    """``ui.server_start._drop_expired_sessions``: Streamlit's websocket session manager
    keeps sessions in a ``MemorySessionStorage`` whose ``_cache.expire()`` removes the
    expired ones and returns them; the runtime keeps its loop in ``_async_objs``."""
    import inspect

    from streamlit.runtime import runtime
    from streamlit.runtime.memory_session_storage import MemorySessionStorage
    from streamlit.runtime.websocket_session_manager import WebsocketSessionManager

    storage = MemorySessionStorage(ttl_seconds=0)
    assert callable(storage._cache.expire) and storage._cache.expire() == []
    assert "_session_storage" in inspect.getsource(WebsocketSessionManager.__init__)
    source = inspect.getsource(runtime.Runtime)
    assert "self._session_mgr" in source and "self._async_objs" in source
    assert "eventloop" in inspect.getsource(runtime.AsyncObjects)


def test_the_message_callback_is_where_send_wakeup_replaces_it():
    """``ui.send_wakeup.install``: the runtime hands ``_enqueued_some_message`` to its
    session manager, which keeps it as ``_message_enqueued_callback`` and hands it to
    each session it creates, which calls it for every message it queues; the runtime's
    async objects have the loop and the ``need_send_data`` event."""
    import inspect

    from streamlit.runtime import app_session, runtime
    from streamlit.runtime.websocket_session_manager import WebsocketSessionManager

    source = inspect.getsource(runtime.Runtime)
    assert '"message_enqueued_callback": self._enqueued_some_message' in source
    assert "def _get_async_objs(self)" in source
    assert "need_send_data" in inspect.getsource(runtime.AsyncObjects)
    manager = inspect.getsource(WebsocketSessionManager)
    assert "self._message_enqueued_callback = message_enqueued_callback" in manager
    assert "message_enqueued_callback=self._message_enqueued_callback" in manager
    assert "self._message_enqueued_callback()" in inspect.getsource(app_session.AppSession)
