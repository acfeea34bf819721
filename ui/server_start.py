"""What a server does once, before its first session: clean up after a killed server,
put the per-session rerun limit in front of the runtime, and start the thread that stops
closed sessions' upload workers."""

from __future__ import annotations

import streamlit as st


@st.cache_resource(show_spinner=False)
def on_server_start() -> int:
    """Once per server process: remove upload temp folders that a killed server left, and
    put the per-session rerun limit (``ui.rerun_gate``) in front of the runtime's messages.

    Returns:
        How many folders were removed.
    """
    from streamlit.runtime import Runtime

    from ui import rerun_gate
    from upload.tempdirs import remove_stale_workdirs

    if Runtime.exists():  # a served app (AppTest runs the script without a server)
        rerun_gate.install(Runtime.instance())
        _start_reaper(Runtime.instance())
    return remove_stale_workdirs()


REAP_EVERY_S = 10.0  # how often closed sessions' upload workers are looked for


def _start_reaper(runtime) -> None:
    """A daemon thread that stops the upload workers of closed sessions and collects the
    exit status of those that ended (``upload.client.reap``), every ``REAP_EVERY_S``."""
    import threading
    import time

    from streamlit.runtime.scriptrunner import get_script_run_ctx

    from upload import client

    def session_id() -> str | None:
        ctx = get_script_run_ctx()
        return None if ctx is None else ctx.session_id

    def loop() -> None:
        while True:
            time.sleep(REAP_EVERY_S)
            try:
                client.reap(runtime.is_active_session)
            except Exception:  # noqa: BLE001 - try again next time; never end the thread
                pass

    client.caller = session_id
    threading.Thread(target=loop, name="reap-upload-workers", daemon=True).start()
