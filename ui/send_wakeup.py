"""Waking Streamlit's send loop without a trip through the self-pipe.

Every element a script draws is one ForwardMsg. Its script thread hands it to the event
loop, which queues it in the session and calls the runtime's "a message is queued"
callback (``Runtime._enqueued_some_message``). Streamlit 1.67's callback always goes
through ``loop.call_soon_threadsafe``, even when it runs on the loop itself, as it
then does: a write to the loop's self-pipe and, next turn, a read. Each is a system
call that lets go of the GIL, and while another session's thread computes, getting
the GIL back costs the loop up to the switch interval every time.

With three students pasting paragraphs, py-spy found the event loop busy 91 % of the
time, a fifth of it in those two calls (issue #25): every other session's finished run
waited in line behind them (up to 110 ms between its script's end and its
``script_finished`` message). Here the callback sets the runtime's ``need_send_data``
event directly when it runs on the loop's own thread (what ``call_soon_threadsafe``
would do a turn later) and keeps Streamlit's way on any other thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable


def direct(runtime) -> Callable[[], None] | None:
    """The runtime's "a message is queued" callback, with the shortcut on its loop's
    thread; None where this Streamlit lacks the private names it needs."""
    original = getattr(runtime, "_enqueued_some_message", None)
    get_objs = getattr(runtime, "_get_async_objs", None)
    if not callable(original) or not callable(get_objs):
        return None

    def enqueued() -> None:
        objs = get_objs()
        try:
            on_loop = asyncio.get_running_loop() is objs.eventloop
        except RuntimeError:  # no loop runs in this thread (a script thread)
            on_loop = False
        if on_loop:
            objs.need_send_data.set()
        else:
            original()

    enqueued.send_wakeup = True  # marks an installed callback
    return enqueued


def install(runtime) -> int:
    """Give the runtime's session manager, and the sessions it already holds, the
    direct callback (:func:`direct`). Private attributes, looked up softly: a
    Streamlit without them keeps its own callback. Returns how many places now use it
    (0: nothing changed; a second call changes nothing more)."""
    manager = getattr(runtime, "_session_mgr", None)
    current = getattr(manager, "_message_enqueued_callback", None)
    if manager is None or getattr(current, "send_wakeup", False):
        return 0
    callback = direct(runtime)
    if callback is None or current is None:
        return 0
    manager._message_enqueued_callback = callback
    changed = 1
    for info in getattr(manager, "list_sessions", list)():
        session = getattr(info, "session", None)
        if getattr(session, "_message_enqueued_callback", None) is not None:
            session._message_enqueued_callback = callback
            changed += 1
    return changed
