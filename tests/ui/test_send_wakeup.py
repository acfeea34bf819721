"""ui.send_wakeup: on the event loop's own thread the send loop is woken at once (no
self-pipe); from any other thread Streamlit's own callback runs, as before."""

from __future__ import annotations

import asyncio
import threading
from types import SimpleNamespace

from ui import send_wakeup


class _Runtime:
    """The two private names of Streamlit's ``Runtime`` that ``send_wakeup`` uses, over a
    real event loop (``tests/test_library_surfaces.py`` checks Streamlit has them)."""

    def __init__(self, loop: asyncio.AbstractEventLoop):
        self.objs = SimpleNamespace(eventloop=loop, need_send_data=asyncio.Event())
        self.original_calls: list[str] = []
        self._session_mgr = SimpleNamespace(
            _message_enqueued_callback=self._enqueued_some_message,
            list_sessions=lambda: [SimpleNamespace(session=self.session)],
        )
        self.session = SimpleNamespace(_message_enqueued_callback=self._enqueued_some_message)

    def _get_async_objs(self):
        return self.objs

    def _enqueued_some_message(self) -> None:  # Streamlit's way: a turn of the loop later
        self.original_calls.append(threading.current_thread().name)
        self.objs.eventloop.call_soon_threadsafe(self.objs.need_send_data.set)


async def _woken_on_loop() -> tuple[bool, list[str]]:
    runtime = _Runtime(asyncio.get_running_loop())
    callback = send_wakeup.direct(runtime)
    callback()
    return runtime.objs.need_send_data.is_set(), runtime.original_calls


def test_on_the_loop_thread_the_event_is_set_at_once():
    is_set, original_calls = asyncio.run(_woken_on_loop())
    assert is_set  # before the loop turned: no call_soon_threadsafe
    assert original_calls == []


async def _woken_from_a_script_thread() -> tuple[bool, list[str]]:
    runtime = _Runtime(asyncio.get_running_loop())
    callback = send_wakeup.direct(runtime)
    worker = threading.Thread(target=callback, name="ScriptRunner.scriptThread")
    worker.start()
    await asyncio.to_thread(worker.join)
    await asyncio.wait_for(runtime.objs.need_send_data.wait(), 5)
    return runtime.objs.need_send_data.is_set(), runtime.original_calls


def test_from_another_thread_streamlits_own_callback_runs():
    is_set, original_calls = asyncio.run(_woken_from_a_script_thread())
    assert is_set and original_calls == ["ScriptRunner.scriptThread"]


def test_install_reaches_the_manager_and_its_sessions_once():
    loop = asyncio.new_event_loop()
    try:
        runtime = _Runtime(loop)
        assert send_wakeup.install(runtime) == 2  # the manager and one session
        assert runtime._session_mgr._message_enqueued_callback.send_wakeup
        assert runtime.session._message_enqueued_callback.send_wakeup
        assert send_wakeup.install(runtime) == 0  # installed already
    finally:
        loop.close()


def test_a_runtime_without_the_private_names_is_left_alone():
    assert send_wakeup.install(SimpleNamespace()) == 0
    assert send_wakeup.direct(SimpleNamespace()) is None
