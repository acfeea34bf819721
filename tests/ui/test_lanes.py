"""ui.lanes: long sentences take turns, heavy runs make way for short ones (issue #25).

Runs are threads here, as the server's script runs are; a real server with three
students pasting paragraphs, or ten uploads at once, is the bench's fair-share section.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from ui import lanes
from ui.lanes import LONG_TEXT_CHARS, run_class

LONG, SHORT = "x" * LONG_TEXT_CHARS, "the cat sat on the mat"


def _together(*runs: Callable[[], None]) -> None:
    """Runs each function on a thread of its own, all at once, and waits for them."""
    threads = [threading.Thread(target=run) for run in runs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)


def _short_run(running: threading.Event, done: threading.Event) -> Callable[[], None]:
    def run():
        with run_class(SHORT):
            running.set()
            time.sleep(0.3)
            done.set()

    return run


def test_long_sentences_take_turns_and_short_ones_never_wait():
    """Runs with a sentence of ``LONG_TEXT_CHARS`` or more go one at a time (three
    students pasting paragraphs made another session's reruns 3.3x slower); a short
    sentence's run passes while a long one holds the lane."""
    entered = threading.Event()

    def second():
        with run_class(LONG):
            entered.set()

    with run_class(LONG):
        with run_class(SHORT):  # no wait, or this would never return
            pass
        waiting = threading.Thread(target=second)
        waiting.start()
        assert not entered.wait(3 * lanes.WAIT_STEP_S)  # still waiting its turn
    assert entered.wait(30)  # its turn came when the first left the lane
    waiting.join(30)
    with run_class(LONG):  # and it left the lane free
        pass


def test_a_long_run_makes_way_for_short_runs(monkeypatch):
    """In the long lane a run pauses at its next figure while a short run is running
    (until it ends, at most ``MAKE_WAY_S``); elsewhere nothing waits."""
    monkeypatch.setattr(lanes, "MAKE_WAY_S", 60.0)  # no timeout on a loaded machine
    assert lanes.make_way() == 0.0  # in no run class
    running, done, returned_after_short = (threading.Event() for _ in range(3))

    def long_run():
        with run_class(LONG):
            running.wait(30)
            lanes.make_way()
            if done.is_set():
                returned_after_short.set()
            assert lanes.make_way() < 5  # no short run left: no wait

    _together(_short_run(running, done), long_run)
    assert returned_after_short.is_set()
    with run_class(SHORT):  # a short run itself never waits
        assert lanes.make_way() == 0.0


def test_a_long_run_waits_at_most_make_way_s(monkeypatch):
    monkeypatch.setattr(lanes, "MAKE_WAY_S", 0.05)
    release, running = threading.Event(), threading.Event()

    def stuck_short_run():
        with run_class(SHORT):
            running.set()
            release.wait(60)

    def long_run():
        running.wait(30)
        try:
            with run_class(LONG):
                assert 0.04 <= lanes.make_way() < 30  # gave up waiting: never stuck
        finally:
            release.set()

    _together(stuck_short_run, long_run)
    assert release.is_set()


def test_a_run_on_an_uploaded_model_makes_way_without_taking_a_turn(monkeypatch):
    """A short sentence's run on an uploaded model waits for short runs at its figures,
    is not one of them (nothing waits for it) and takes no turn in the long lane (a long
    sentence's run goes on beside it)."""
    monkeypatch.setattr(lanes, "MAKE_WAY_S", 60.0)
    running, done, returned_after_short = (threading.Event() for _ in range(3))

    def upload_run():
        with run_class(SHORT, uploaded=True):
            running.wait(30)
            lanes.make_way()
            if done.is_set():
                returned_after_short.set()

    _together(_short_run(running, done), upload_run)
    assert returned_after_short.is_set()
    with run_class(SHORT, uploaded=True):
        with run_class(LONG):  # no turn taken: the lane is free
            assert lanes.make_way() < 5  # and the upload's run is not a short run


def test_a_fragment_inside_a_run_keeps_its_class_and_alone_takes_one():
    """``ui.visualizer.heads`` (an ``st.fragment``) puts itself in its class: called in
    the full run it adds nothing (a second turn in the long lane would wait forever for
    the first), rerun alone it takes its class like a full run."""
    with run_class(LONG):
        assert not lanes._LONG_LANE.acquire(blocking=False)  # the run holds the lane
        with run_class(LONG):  # the fragment in the full run: no second turn
            assert lanes._MAKES_WAY.on
        assert lanes._MAKES_WAY.on  # the outer run still makes way
    assert lanes._LONG_LANE.acquire(blocking=False)  # released once, by the outer run
    lanes._LONG_LANE.release()
    with run_class(SHORT):  # a fragment rerun alone: counted among the short runs
        assert lanes._short_runs[0] == 1
        with run_class(SHORT):
            assert lanes._short_runs[0] == 1
    assert lanes._short_runs[0] == 0
