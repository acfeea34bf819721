"""What a server does once: before its first session, clean up after a killed server,
put the per-session rerun limit in front of the runtime, let its send loop wake
without a trip through the self-pipe, shorten the GIL's switch
interval and start the thread that drops closed sessions, stops their upload workers
and hands freed memory back; after its first run, freeze the objects made so far out
of the cyclic collector's reach."""

from __future__ import annotations

import sys
import threading

import streamlit as st

# How long a thread may hold the GIL while another waits for it (Python's default: 5 ms).
# A session's rerun hands the GIL back and forth with the event loop at every message it
# sends; while another session's thread computes in Python, each hand-back cost up to
# 5 ms: a 160 ms rerun took 620-740 ms beside a 262,144-word upload, 440-530 ms at 1 ms
# (issue #25, bench/fairshare_uploads.py).
SWITCH_INTERVAL_S = 0.001


@st.cache_resource(show_spinner=False)
def on_server_start() -> int:
    """Once per server process: remove upload temp folders that a killed server left,
    put the per-session rerun limit (``ui.rerun_gate``) in front of the runtime's
    messages, wake the send loop directly on its own thread (``ui.send_wakeup``), and
    hand the GIL between threads every ``SWITCH_INTERVAL_S``.

    Returns:
        How many folders were removed.
    """
    from streamlit.runtime import Runtime

    from ui import rerun_gate, send_wakeup
    from upload.tempdirs import remove_stale_workdirs

    if Runtime.exists():  # a served app (AppTest runs the script without a server)
        sys.setswitchinterval(SWITCH_INTERVAL_S)
        rerun_gate.install(Runtime.instance())
        send_wakeup.install(Runtime.instance())
        _start_reaper(Runtime.instance())
    return remove_stale_workdirs()


@st.cache_resource(show_spinner=False)
def after_first_run() -> int:
    """Once per served process, when its first run has drawn a page: every object alive
    then (imported modules, the shipped models, Streamlit's own) moves to the cyclic
    collector's permanent generation (``gc.freeze``), so that a full collection scans only
    what sessions made since. Such a collection holds the GIL, freezing every session's
    thread: 140-240 ms for the ~190,000 objects of a fresh server, each time a student's
    work allocated enough (issue #25). Not in AppTest (no served runtime).

    Returns:
        How many objects were frozen (0 outside a served app).
    """
    import gc

    from streamlit.runtime import Runtime

    if not Runtime.exists():
        return 0
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def _drop_expired_sessions(runtime, wait_s: float = 2.0) -> bool:
    """Drop closed tabs' sessions whose ``disconnectedSessionTTL`` has passed, on the
    runtime's event loop (waiting up to ``wait_s`` for it); whether any was dropped.

    Streamlit 1.67 keeps them in a ``TTLCache`` that removes an expired entry only on
    its next write (a tab opening or closing), so on a quiet server a closed tab's
    session, its uploaded model with it (400 MB for a 262,144-word vocabulary), stayed
    resident for good (issue #25). The cache is not thread-safe: ``expire()`` runs on
    the loop. Private attributes, looked up softly: a Streamlit without them gets
    nothing done here (expiry on the next write, as before).
    """
    storage = getattr(getattr(runtime, "_session_mgr", None), "_session_storage", None)
    expire = getattr(getattr(storage, "_cache", None), "expire", None)
    loop = getattr(getattr(runtime, "_async_objs", None), "eventloop", None)
    if not callable(expire) or loop is None or loop.is_closed():
        return False
    done, dropped = threading.Event(), []

    def on_loop() -> None:
        try:
            dropped.append(bool(expire()))
        finally:
            done.set()

    loop.call_soon_threadsafe(on_loop)
    return done.wait(wait_s) and dropped == [True]


REAP_EVERY_S = 10.0  # how often closed sessions' upload workers are looked for


def _start_reaper(runtime) -> None:
    """A daemon thread that, every ``REAP_EVERY_S``, drops closed tabs' expired sessions
    (:func:`_drop_expired_sessions`), stops the upload workers of closed sessions and
    collects the exit status of those that ended (``upload.client.reap``), and, when a
    session was dropped or an uploaded model freed (``upload.opened.FREED``), collects
    garbage and hands the freed heap back to the system
    (``inference.memory.release_freed``)."""
    import time

    from streamlit.runtime.scriptrunner import get_script_run_ctx

    from inference.memory import release_freed
    from upload import client, opened

    def session_id() -> str | None:
        ctx = get_script_run_ctx()
        return None if ctx is None else ctx.session_id

    def loop() -> None:
        while True:
            time.sleep(REAP_EVERY_S)
            try:
                closed = _drop_expired_sessions(runtime)
                client.reap(runtime.is_active_session)
                if closed or opened.FREED.is_set():  # a closed session's objects are
                    opened.FREED.clear()  # often in reference cycles: collect them first
                    release_freed(collect=True)
            except Exception:  # noqa: BLE001 - try again next time; never end the thread
                pass

    client.caller = session_id
    threading.Thread(target=loop, name="reap-upload-workers", daemon=True).start()
