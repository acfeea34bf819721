"""The visualizer's layer, head and view changes rerun one ``st.fragment`` (``ui.visualizer
.heads``): the Layer and Head pickers stay in the sidebar, a change shows the right head,
and the pickers are the same widgets as the sidebar's on the other pages."""

from __future__ import annotations

import asyncio
import urllib.parse

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.testing.v1 import AppTest

from bench.common import shipped
from bench.concurrency import is_right
from bench.stclient import Session
from inference.analysis import analyze
from tests.helpers import ROOT
from tests.helpers.charts import plotly_charts
from tests.helpers.pages import open_page

pytestmark = pytest.mark.xdist_group("browser")  # the shared server's worker

CAT, DOG = "the cat sat on the mat", "a dog ran to the old park"
SIDEBAR = 1  # a delta path's first index (0: the main area)
FRAGMENT_RUN = ForwardMsg.ScriptFinishedStatus.FINISHED_FRAGMENT_RUN_SUCCESSFULLY


def _path(run, name: str) -> tuple[int, ...]:
    """The delta path of the widget labelled ``name`` in ``run``."""
    wid = run.widget(name).id
    kinds = {p: getattr(e, e.WhichOneof("type")) for p, (e, _) in run.elements.items()}
    return next(p for p, proto in kinds.items() if getattr(proto, "id", None) == wid)


def test_a_head_change_reruns_the_fragment_only_and_shows_that_head(server):
    attn = {t: analyze(shipped("softmax"), t).outputs["attn"] for t in (CAT, DOG)}

    async def go():
        link = {"model": "softmax", "view": "attention", "layer": 1, "head": 0, "text": CAT}
        async with Session(server.ws_url, link) as s:
            run = await s.open()
            assert run.status == 0 and is_right(run, attn[CAT][1, 0])
            for name in ("Layer", "Head", "View"):  # drawn by the fragment
                assert run.widget(name).fragment_id, name
            for name in ("Model", "Type a sentence"):  # drawn by the full run
                assert not run.widget(name).fragment_id, name
            assert _path(run, "Head")[0] == _path(run, "Layer")[0] == SIDEBAR

            run = await s.set(("Head", "head"), "2")
            assert run.status == FRAGMENT_RUN and not run.exceptions()
            assert is_right(run, attn[CAT][1, 2]) and not is_right(run, attn[CAT][1, 0])
            assert dict(urllib.parse.parse_qsl(s.query_string))["head"] == "2"
            assert _path(run, "Head")[0] == SIDEBAR  # redrawn in its place

            run = await s.set(("Layer", "layer"), "0")
            assert run.status == FRAGMENT_RUN and is_right(run, attn[CAT][0, 2])

            run = await s.set("text", DOG)  # a full run: the fragment follows the sentence
            assert run.status == 0 and is_right(run, attn[DOG][0, 2])

    asyncio.run(go())


def test_the_pickers_carry_from_the_visualizer_to_a_lesson_page():
    """Drawn after the page by ``app.py`` (the main script), the fragment's pickers have
    the ids of the sidebar's pickers on the other pages: a choice carries over."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    at.selectbox(key="layer").set_value(1)
    at.selectbox(key="head").set_value(2).run()
    assert not at.exception, [e.value for e in at.exception]
    open_page("merged", at)
    assert not at.exception, [e.value for e in at.exception]
    assert (at.selectbox(key="layer").value, at.selectbox(key="head").value) == (1, 2)
    titles = [c.spec["layout"].get("title", {}).get("text", "")
              for c in plotly_charts(at)]  # fmt: skip
    assert any("L1 H2" in t for t in titles), titles  # the lesson shows the chosen head
