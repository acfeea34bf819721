"""Which script runs go first: long sentences take turns, heavy runs make way.

A session's script runs on a thread of its own, and every thread of the server shares
one interpreter (the GIL). Three students pasting paragraphs, or ten uploads analysed at
once, made another session's short rerun take 3.0-3.7x its time alone (issue #25).

:func:`run_class` puts each run in its class, around the page in ``app.py``:

- **short** (a sentence under ``LONG_TEXT_CHARS`` on a shipped or served model): runs at
  once, and is counted among the short runs now running;
- **long** (a sentence of ``LONG_TEXT_CHARS`` or more: 64 tokens, every figure at its
  largest): one at a time, in the long lane, and makes way;
- **uploaded** (any sentence on an uploaded model: its figures wait for its worker, then
  are built all at once): makes way, without a turn in the lane.

A run that makes way pauses at :func:`make_way`, called before each figure is built or
encoded (``ui.specs``, ``ui.figures``), while short runs are running.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

LONG_TEXT_CHARS = 240  # a sentence this long (about 48 words) runs in the long lane
WAIT_STEP_S = 0.1  # a run waiting for the lane rewrites its line this often
MAKE_WAY_S = 0.1  # a run that makes way waits at most this long at one checkpoint

_LONG_LANE = threading.BoundedSemaphore(1)
_SHORT = threading.Condition()  # guards _short_runs, notified when one ends
_short_runs = [0]  # short runs now running
_MAKES_WAY = threading.local()  # .on: this thread's run makes way
_IN_RUN = threading.local()  # .on: this thread's run is in its class (run_class)


@contextmanager
def run_class(text: str, uploaded: bool = False) -> Iterator[None]:
    """Runs the block as a short, long or uploaded-model run (see the module).

    Args:
        text: the sentence of this run ("" on a page without one).
        uploaded: the run is on an uploaded model.

    Re-entrant: inside a run already in its class (an ``st.fragment`` called during the
    full run, which puts itself in its class for its own reruns) it does nothing more.
    """
    if getattr(_IN_RUN, "on", False):  # a fragment of a run already in its class
        yield
        return
    _IN_RUN.on = True
    try:
        if len(text) >= LONG_TEXT_CHARS:
            with long_lane(), _making_way():
                yield
        elif uploaded:
            with _making_way():
                yield
        else:
            with _short_run():
                yield
    finally:
        _IN_RUN.on = False


@contextmanager
def long_lane() -> Iterator[None]:
    """One run at a time: the others wait for their turn, with a line saying so.

    Such a run does the most a shipped model's rerun can do (64 tokens: every figure at
    its largest, suggestions for every word on screen); in one lane a short rerun shares
    the server with at most one of them. While waiting, the line is rewritten every
    ``WAIT_STEP_S`` seconds: each write lets Streamlit stop this run for the student's
    newer one.
    """
    import streamlit as st

    line = None
    while not _LONG_LANE.acquire(timeout=WAIT_STEP_S):
        line = line or st.empty()
        line.caption("Long sentences take turns on this server: yours is next.")
    try:
        if line is not None:
            line.empty()
        yield
    finally:
        _LONG_LANE.release()


@contextmanager
def _making_way() -> Iterator[None]:
    """Marks this thread's run as one that makes way (:func:`make_way`)."""
    _MAKES_WAY.on = True
    try:
        yield
    finally:
        _MAKES_WAY.on = False


@contextmanager
def _short_run() -> Iterator[None]:
    """Counts this run among the short ones running, which heavy runs make way for."""
    with _SHORT:
        _short_runs[0] += 1
    try:
        yield
    finally:
        with _SHORT:
            _short_runs[0] -= 1
            _SHORT.notify_all()


def make_way() -> float:
    """In a run that makes way: wait while short runs are running, at most
    ``MAKE_WAY_S``; anywhere else return at once. Returns the seconds waited.

    An upload's figures at T = 1,159 are 400 ms of the interpreter, in steps that hold
    the GIL up to 30 ms: a short rerun that started meanwhile took 3.3x its time alone
    (issue #25). The heavy run now pauses at its next figure until the short one is
    done, or ``MAKE_WAY_S`` passed (a class clicking non-stop slows it by at most that
    per figure, never stops it).
    """
    if not getattr(_MAKES_WAY, "on", False):
        return 0.0
    start = time.perf_counter()
    with _SHORT:
        _SHORT.wait_for(lambda: _short_runs[0] == 0, timeout=MAKE_WAY_S)
    return time.perf_counter() - start
