"""A class on one server: real sessions of ``streamlit run app.py`` over its websocket.

The server is the app as ``make run`` serves it (``deploy/launch.py``: its own process,
``MALLOC_ARENA_MAX=2``, the shipped models of ``folder``). Each session
(``bench/stclient.py``) is what one student's browser sends and receives: it opens the
page with a link's query parameters (model, ``view=attention``, layer, head, text),
then alternately picks another layer/head and types a sentence (``THINK_S`` after each
answer), and every eighth action visits another view of the View control (each in turn)
and comes back, each time sending the ``rerun_script`` BackMsg and reading ForwardMsgs
until ``script_finished``; a rerun's latency is that interval. Half of the sessions type the
teacher's sentences (the same ones for all of them), the other half sentences of their
own; models alternate.

After every rerun on the attention view the main heatmap the session was sent is checked
against a direct ``analyze()`` of that session's own sentence at its own layer and head
(computed before any session starts), so a result leaking between sessions, a stale
figure or an ignored click counts as a wrong result; a visit to another view counts as
wrong when it shows an exception or does not finish. Server RSS and CPU time are read with psutil on
the server's pid.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import psutil

from bench.common import BENCH_KINDS as SHIPPED_KINDS
from bench.common import EXPORTED, THINK_S, sentence_of, shipped
from bench.stclient import Run, Session, plotly_array
from deploy.launch import APP, ARENA_MAX, Server, serve
from inference.analysis import analyze
from inference.measure import summarize

TARGETS = {
    "median_ms": 500.0,  # all sessions at once
    "p95_ms": 1000.0,
    "throughput_per_s": 40.0,
    "growth_mb": 50.0,  # server RSS over the concurrent reruns
    "single_head_change_median_ms": 50.0,  # one session alone, a layer/head change
}
HEATMAP_KEY = "attn_big"  # the main heatmap's widget key (else the first chart is read)
ATOL = 1e-5  # shown weight vs direct analysis
TEACHER = (  # sentences the teacher hands out (the app's own examples)
    "when Mary and John went to the store , John gave a drink to Mary .",
    "the keys to the old cabinet are on the table .",
    "the dog that the children like runs in the park .",
    "the animal didn't cross the street because it was too tired .",
)
HEAD, SENTENCE, VIEW = "layer/head change", "new sentence", "another view"
VIEW_EVERY = 8  # actions: one in each eight visits another view, the next comes back


@dataclass
class Student:
    """One session's plan and state: what it selected, so what it must be shown."""

    kind: str
    sentences: list[str]
    teacher: bool
    text: str = ""
    layer: int = 0
    head: int = 0
    steps: int = 0
    visits: int = 0  # views visited so far (each in turn)
    away: str | None = None  # the other view shown now, else None (the attention view)
    session: Session | None = field(default=None, repr=False)

    def query(self) -> dict:
        """The link this student opens."""
        self.text = self.sentences[0]
        return {"model": self.kind, "view": "attention", "layer": 0, "head": 0, "text": self.text}

    async def act(self) -> tuple[str, Run]:
        """The next action (even steps: layer/head, odd steps: a sentence; every
        ``VIEW_EVERY`` steps a visit to another view and back) and its run."""
        step, self.steps = self.steps, self.steps + 1
        run = self.session.last
        if self.away is not None:  # back to the attention view, where results are checked
            self.away = None
            return VIEW, await self.session.set(("View", "view"), "attention")
        if step % VIEW_EVERY == VIEW_EVERY - 2:
            views = [v for v in run.widget("View", "view").options if v != "attention"]
            self.away, self.visits = views[self.visits % len(views)], self.visits + 1
            return VIEW, await self.session.set(("View", "view"), self.away)
        if step % 2 == 0:
            n_layer = len(run.widget("Layer", "layer").options)
            n_head = len(run.widget("Head", "head").options)
            if step % 6 == 4 and n_layer > 1:  # every third change picks another layer
                self.layer = (self.layer + 1) % n_layer
                return HEAD, await self.session.set(("Layer", "layer"), str(self.layer))
            self.head = (self.head + 1 + step // 2 % max(1, n_head - 1)) % n_head
            return HEAD, await self.session.set(("Head", "head"), str(self.head))
        options = [s for s in self.sentences if s != self.text]
        self.text = options[(step // 2) % len(options)]
        return SENTENCE, await self.session.set(("text", "Type a sentence"), self.text)


def shown_heatmap(run: Run) -> np.ndarray:
    """The (T, T) weights of the main heatmap a run sent: the first trace with a ``z``."""
    spec = run.plotly(HEATMAP_KEY)
    trace = next(t for t in spec["data"] if "z" in t)
    return plotly_array(trace["z"])


def is_right(run: Run, want: np.ndarray) -> bool:
    """Whether the run shows ``want`` (T, T) (NaN cells of a masked figure read as 0)."""
    if run.exceptions() or not run.finished:
        return False
    try:
        shown = np.nan_to_num(shown_heatmap(run))
    except (LookupError, StopIteration, KeyError, ValueError):
        return False
    return shown.shape == want.shape and bool(np.allclose(shown, want, atol=ATOL))


def students(models: dict, sessions: int, per_session: int) -> list[Student]:
    """Half on the teacher's sentences, half on their own; models alternate."""
    kinds = list(models)
    out = []
    for i in range(sessions):
        kind = kinds[i % len(kinds)]
        teacher = i < sessions // 2 or sessions == 1
        own = [
            sentence_of(models[kind], 6 + (7 * i + 3 * j) % 25, seed=1000 * i + j)
            for j in range(per_session)
        ]
        sentences = list(TEACHER) if teacher else own
        out.append(Student(kind, sentences, teacher, visits=i))  # views in turn from i-th
    return out


def references(models: dict, group: list[Student]) -> dict:
    """(kind, text) -> attention (L, H, T, T) from a direct ``analyze()``."""
    pairs = {(s.kind, text) for s in group for text in s.sentences}
    return {(kind, text): analyze(models[kind], text).outputs["attn"] for kind, text in pairs}


def concurrency(
    sessions: int,
    reruns: int,
    per_session_sentences: int = 5,
    single_reruns: int = 20,
    timeout_s: float = 120.0,
    app: Path = APP,
    folder: Path = EXPORTED,
    server: Server | None = None,
) -> dict:
    """``sessions`` real sessions at once on a real server, ``reruns`` reruns in total.

    Args:
        sessions: simultaneous sessions (students).
        reruns: reruns of the concurrent phase, over all sessions.
        per_session_sentences: own sentences per session (the teacher has four).
        single_reruns: reruns of one session alone, before the others start.
        timeout_s: seconds one rerun may take before the session counts as failed.
        app: the Streamlit script served (the visualizer's widgets and heatmap).
        folder: the shipped models the server serves and the references come from.
        server: a running server of ``app`` on ``folder`` to use (a test's shared one);
            None: start one.

    Returns:
        Latency (ms) alone and together, overall and per action, reruns per second,
        page-open latency, wrong results and errors, server RSS (MB) and CPU per
        rerun, the targets and whether they were met.
    """
    models = {kind: shipped(kind, folder) for kind in SHIPPED_KINDS}
    group = students(models, sessions, per_session_sentences)
    expected = references(models, group)
    with contextlib.nullcontext(server) if server else serve(app, folder) as running:
        out = asyncio.run(_drive(running, group, expected, reruns, single_reruns, timeout_s))
    out["models"] = str(folder)
    out["malloc_arena_max"] = ARENA_MAX
    return out


async def _drive(server: Server, group, expected, reruns, single_reruns, timeout_s) -> dict:
    """All open the link at once, one session reruns alone, then all rerun at once."""
    async with contextlib.AsyncExitStack() as stack:
        for s in group:
            s.session = Session(server.ws_url, s.query(), timeout_s=timeout_s)
            await stack.enter_async_context(s.session)
        opened = await asyncio.gather(*(s.session.open() for s in group))
        open_wrong = sum(
            not is_right(r, expected[s.kind, s.text][0, 0])
            for r, s in zip(opened, group, strict=True)
        )
        alone = await _together(group[:1], single_reruns, expected, server)
        together = await _together(group, reruns, expected, server)
    return _summary(group, opened, open_wrong, alone, together)


async def _together(group: list[Student], reruns: int, expected: dict, server: Server) -> dict:
    """Every student acts, ``THINK_S`` after each answer, until ``reruns`` reruns are
    done in total. Back to back, a session went past the server's 4 reruns a second
    (``ui/rerun_gate.py``) and its reruns timed the limit's wait (one session alone:
    156 ms a head change, where the server took 40)."""
    shares = [reruns // len(group) + (i < reruns % len(group)) for i in range(len(group))]
    record: dict = {"ms": [], "action": [], "wrong": [], "errors": [], "rss": []}
    me = psutil.Process()
    rss_start, cpu_server, cpu_me = server.rss_mb(), server.cpu_s(), me.cpu_times()
    wall = time.perf_counter()

    async def one(i: int, s: Student) -> None:
        for _ in range(shares[i]):
            try:
                action, run = await s.act()
            except Exception as exc:  # a failed session is a result, not a crash here
                record["errors"].append(f"session {i} ({s.kind}): {exc!r}"[:300])
                return
            want = expected[s.kind, s.text][s.layer, s.head]  # (T, T)
            record["ms"].append(run.ms)
            record["action"].append(action)
            record["rss"].append(server.rss_mb())
            shown = run.finished and not run.exceptions() if s.away else is_right(run, want)
            if not shown:
                record["wrong"].append(f"session {i} step {s.steps}: {action}")
            await asyncio.sleep(THINK_S)  # a student, not a script: under the rerun limit

    await asyncio.gather(*(one(i, s) for i, s in enumerate(group)))
    wall = time.perf_counter() - wall
    cpu_after = me.cpu_times()
    record |= {
        "wall_s": wall,
        "rss_start_mb": rss_start,
        "rss_end_mb": server.rss_mb(),
        "server_cpu_s": server.cpu_s() - cpu_server,
        "client_cpu_s": (cpu_after.user + cpu_after.system) - (cpu_me.user + cpu_me.system),
    }
    return record


def _stats(record: dict) -> dict:
    ms, action = record["ms"], record["action"]
    by_action = {
        a: summarize([m for m, b in zip(ms, action, strict=True) if b == a])
        for a in (HEAD, SENTENCE, VIEW)
        if a in action
    }
    n, wall = len(ms), record["wall_s"]
    return {
        "reruns": n,
        "wall_s": wall,
        "latency": summarize(ms) if ms else None,
        "latency_by_action": by_action,
        "throughput_per_s": n / wall if n and wall else None,
        "server_cpu_ms_per_rerun": 1e3 * record["server_cpu_s"] / n if n else None,
        "client_cores_used": record["client_cpu_s"] / wall if wall else None,
    }


def _summary(
    group: list[Student], opened: list[Run], open_wrong: int, alone: dict, together: dict
) -> dict:
    trace = together["rss"]
    growth = together["rss_end_mb"] - together["rss_start_mb"]
    stats = _stats(together)
    single = _stats(alone) | {"model": group[0].kind}
    lat = stats["latency"] or {}
    head = single["latency_by_action"].get(HEAD, {})
    wrong = together["wrong"] + alone["wrong"]
    errors = together["errors"] + alone["errors"]
    met = {
        "correct": not wrong and not errors,
        "median": lat.get("median_ms", float("inf")) <= TARGETS["median_ms"],
        "p95": lat.get("p95_ms", float("inf")) <= TARGETS["p95_ms"],
        "throughput": (stats["throughput_per_s"] or 0) >= TARGETS["throughput_per_s"],
        "growth": growth < TARGETS["growth_mb"],
        "single_head_change": head.get("median_ms", float("inf"))
        <= TARGETS["single_head_change_median_ms"],
    }
    cores = os.cpu_count()
    return stats | {
        "method": "real server (`streamlit run app.py`, MALLOC_ARENA_MAX="
        f"{ARENA_MAX}) driven over its websocket protocol, one client per session",
        "sessions": len(group),
        "teacher_sessions": sum(s.teacher for s in group),
        "open": summarize([r.ms for r in opened]),
        "open_wrong": open_wrong,
        "single_session": single,
        "wrong_results": len(wrong),
        "wrong_examples": wrong[:5],
        "errors": errors[:5],
        "rss_start_mb": together["rss_start_mb"],
        "rss_end_mb": together["rss_end_mb"],
        "growth_mb": growth,
        "growth_second_half_mb": trace[-1] - trace[len(trace) // 2] if len(trace) > 1 else None,
        "rss_trace_mb": trace[:: max(1, len(trace) // 50)],
        "rss_readings": "server process RSS (psutil) when the concurrent reruns start and "
        "after each rerun; no gc or malloc_trim in the server",
        "latency_note": f"{len(group)} sessions on {cores} cores, each rerunning "
        f"{THINK_S:g} s after its last answer (under the server's 4 reruns a second); the "
        "server, this process's sessions and the other load share the cores",
        "think_s": THINK_S,
        "targets": TARGETS,
        "target_growth_mb": TARGETS["growth_mb"],
        "met_each": met,
        "met": all(met.values()),
    }
