"""Issue #25: no student, by accident or on purpose, can take the server from the class.

One real ``streamlit run`` server (the session ``server`` fixture). Every session is a
websocket client speaking Streamlit's own protocol (``bench/stclient.py``: what a browser
sends and reads, without drawing it). The attacks are the bench's own
(``bench/fairshare.py``, ``bench/fairshare_uploads.py``): student B alternately picks
another head and types a new sentence, and times each rerun (message sent -> script
finished); alone just before each case (its baseline), then while its attack runs:

* ``paragraph x1`` / ``paragraph x3``: one or three sessions typing paragraphs of 2,000
  characters of made-up words, one after the other;
* ``rerun flood``: one client sending 500 ``rerun_script`` messages a second without
  waiting for any answer; a new session is opened in the middle of it;
* ``long link``: a session opening a link whose ``text=`` is 1 MB long;
* ``session churn`` (issue #50, its own test): 16 connections opening a session, waiting
  for its first run and closing it, in a loop; new sessions wait in the server's line
  (``ui/session_line.py``), so a session opened meanwhile waits its turn behind them.

Asserted per case: B's slowest rerun is at most ANSWER_LIMIT_S and at most RATIO times its
own baseline's slowest (floored at BASE_FLOOR_S: a quiet machine's 0.1 s would make the
ratio a lottery); a session opened during each attack finishes its first run within
OPEN_LIMIT_S; the attacker sees what it should (the long link: one line saying it was
cut); at the end the server is alive and, once the attackers' closed sessions were
dropped, its RSS grew by less than RSS_GROWTH_LIMIT.
Measured numbers go to ``SCREENSHOTS/fair_share.json``.
"""

from __future__ import annotations

import asyncio
import json
import threading

import psutil

from bench.stclient import Session
from tests.helpers.browser import SCREENSHOTS

ANSWER_LIMIT_S = 2.0
RATIO = 3.0
BASE_FLOOR_S = 0.3
OPEN_LIMIT_S = 2.0
# Issue #25's 100 MB. The attackers' new sentences fill the per-server caches of the
# shipped models' analyses and figures, bounded by bytes (32 + 12 + 16 MB: +68 MB measured
# after a paragraph attack of 20 s, +9 MB more after three attackers and another).
RSS_GROWTH_LIMIT = 100 * 2**20
MODEL_FAILED = "This model failed on this input:"  # an accepted graph failing one sentence
CASE_S = 8.0  # each attack lasts this long; B measures during it
BASE_S = 3.0  # B's baseline, alone, just before each attack
QUERY = {"model": "softmax", "view": "attention", "text": "the cat sat on the mat"}


async def _long_link(server) -> list[str]:
    text = "the cat sat on the mat " * 46_000  # about 1 MB
    async with Session(server.ws_url, {**QUERY, "text": text}, timeout_s=120) as s:
        run = await s.open()
    return [e.alert.body for e, _ in run.elements.values() if e.WhichOneof("type") == "alert"]


def _scenario(server) -> dict:
    """The attacks of ``bench.fairshare`` (each with B's baseline just before it), the long
    link, a new session after them all and the server's RSS once the attackers' closed
    sessions were dropped."""
    from bench.fairshare import flood_case, open_s, paragraph_case, student
    from bench.fairshare_uploads import settled_rss
    from tests.conftest import SESSION_TTL_S
    from ui.server_start import REAP_EVERY_S

    async def run() -> dict:
        await student(server, 2.0)  # warm: the server's first runs, the gate installed
        rss0 = server.rss_mb()
        cases = {
            "paragraph x1": await paragraph_case(server, 1, CASE_S, BASE_S),
            "paragraph x3": await paragraph_case(server, 3, CASE_S, BASE_S),
            "rerun flood": await flood_case(server, 500.0, CASE_S, BASE_S),
        }
        link = await _long_link(server)
        after_open = await open_s(server)
        rss, settled_s = await settled_rss(server, rss0, SESSION_TTL_S + 2 * REAP_EVERY_S + 10)
        return {"cases": cases, "link_alerts": link, "open_after_s": after_open,
                "rss_growth_mb": round(rss - rss0), "settled_s": settled_s}  # fmt: skip

    return _in_thread(run)


def _in_thread(run):
    """``asyncio.run(run())`` in a thread of its own (a sync Playwright fixture may own
    this thread's event loop); its result, or its exception raised here."""
    out: dict = {}

    def thread() -> None:
        try:
            out["result"] = asyncio.run(run())
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
            out["error"] = exc

    t = threading.Thread(target=thread)
    t.start()
    t.join()
    if "error" in out:
        raise out["error"]
    return out["result"]


def test_no_session_takes_the_server_from_the_class(server):
    got = _scenario(server)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    (SCREENSHOTS / "fair_share.json").write_text(json.dumps(got, indent=1, default=str))
    problems = []
    for name, case in got["cases"].items():
        limit = min(ANSWER_LIMIT_S, RATIO * max(case["base_max_ms"] / 1e3, BASE_FLOOR_S))
        if case["max_ms"] is None or case["max_ms"] / 1e3 > limit:
            problems.append(
                f"{name}: B's slowest rerun {case['max_ms']} ms (limit {limit:.2f} s, "
                f"baseline {case['base_max_ms']} ms)"
            )
        opened = case["open_during_s"]
        if opened is None or opened > OPEN_LIMIT_S:
            problems.append(f"{name}: a new session opened in {opened} s")
    cut = [a for a in got["link_alerts"] if "link's text was cut" in a]
    if len(cut) != 1 or "of 1,058,000 characters" not in cut[0]:
        problems.append(f"long link: the page said {got['link_alerts']}")
    if got["open_after_s"] is None or got["open_after_s"] > OPEN_LIMIT_S:
        problems.append(f"a new session after the attacks opened in {got['open_after_s']} s")
    if not psutil.pid_exists(server.pid):
        problems.append("the server died")
    if got["rss_growth_mb"] * 1e6 >= RSS_GROWTH_LIMIT:
        problems.append(f"the server's RSS grew by {got['rss_growth_mb']} MB")
    assert not problems, f"{problems}\n{json.dumps(got, indent=1)[:4000]}"


# A case's attacker may be refused for want of CPU ("... too busy to give it ...") only
# when its work could have had almost none of the machine's CPU during that case
# (bench.cpu_share.free_share: the idle share, or, in ``make test``'s CPU group ahead of
# the other tests, all but the group's own use): its upload worker runs at SCHED_IDLE and
# takes any core nobody else wants.
FREE_SHARE_FOR_REFUSAL = 0.05


def _refused_for_cpu(attacker: dict, case: dict) -> bool:
    """Whether the attacker's load was refused in one line because its worker got no CPU
    time while other work kept every core busy (the case's free share under
    :data:`FREE_SHARE_FOR_REFUSAL`). Upload workers run at SCHED_IDLE, as a server's do:
    beside another job keeping both cores busy they get (almost) none, and the one-line
    refusal ("... was too busy to give it 30 s of CPU time") is what its student sees. On
    a machine with CPU to spare every file loads."""
    said = attacker.get("load_said") or []
    cpu = ("too busy to give it", "no answer within")
    refused = [line for line in said if any(c in line for c in cpu)]
    busy = case.get("cpu_free_share", 1.0) < FREE_SHARE_FOR_REFUSAL
    return len(refused) == 1 and "\n" not in refused[0] and busy


def _upload_problems(case: dict, limit: float, budget_mb: int, relaxed: list[str]) -> list[str]:
    """What is wrong with one upload case of :func:`bench.fairshare_uploads.upload_case`;
    each row it relaxed, and why, goes to ``relaxed``."""
    name, out = case["case"], []
    if case["max_ms"] is None or case["max_ms"] / 1e3 > limit:
        out.append(f"{name}: B's slowest rerun {case['max_ms']} ms (limit {limit:.2f} s)")
    if case["open_during_s"] is None or case["open_during_s"] > OPEN_LIMIT_S:
        out.append(f"{name}: a new session opened in {case['open_during_s']} s")
    if case["workers_peak_mb"] > budget_mb:
        out.append(f"{name}: workers held {case['workers_peak_mb']} MB (budget {budget_mb} MB)")
    for a in case["attackers"]:
        if _refused_for_cpu(a, case):
            relaxed.append(
                f"relaxed: {name}: an attacker's upload was refused for want of CPU, taken as "
                f"its one clear line: {case['cpu_free_share']:.1%} of the machine's CPU was free "
                f"to the suite during the case (under {FREE_SHARE_FOR_REFUSAL:.0%}: other "
                f"work held the cores)"
            )
            continue
        if "error" in a or a["model"] != "upload":  # every one of these files is valid
            out.append(f"{name}: the attacker's upload did not load: {a}")
        elif a.get("sentence_exceptions"):
            out.append(f"{name}: the attacker's sentence raised {a['sentence_exceptions']}")
        elif name == "slow graph":
            lines = [x for x in a["sentence_said"] if x.startswith(MODEL_FAILED)]
            if len(lines) != 1 or "\n" in lines[0]:
                out.append(f"slow graph: the attacker saw {a['sentence_said']}, not one line")
    return out


def test_uploads_leave_the_class_its_share(server, exported_dir, capsys):
    """Issue #25's upload attacks (``bench/fairshare_uploads.py``: a 262,144-word
    vocabulary, a context of 2,048 on 2,000 characters, a graph slow at 6 tokens, ten
    uploads at once), each through Streamlit's own upload route while B times its reruns:
    B's slowest within the limits, a new session open within 2 s, the upload workers'
    memory within the server's budget, every attacker's model loaded (or, on a machine
    with no CPU to spare, refused in one line) and its sentence answered (the slow
    graph's in one line), the server alive after and, once the
    attackers' closed sessions were dropped, its RSS back within 100 MB of before."""
    from bench.fairshare import student
    from bench.fairshare_uploads import CASES, RSS_WITHIN_MB, case_files, settled_rss, upload_case
    from tests.conftest import SESSION_TTL_S
    from ui.server_start import REAP_EVERY_S
    from upload.limits import WORKERS_MEMORY_BYTES

    inspect = (exported_dir / "softmax.inspect.onnx").read_bytes()
    files = {name: case_files(name, inspect) for name in CASES}

    async def run() -> dict:
        await student(server, 1.0)  # warm: the server's first runs
        rss0 = server.rss_mb()
        cases = [await upload_case(server, name, files[name], 3.0) for name in CASES]
        rss, settled_s = await settled_rss(server, rss0, SESSION_TTL_S + 2 * REAP_EVERY_S + 10)
        return {"cases": cases, "rss_before_mb": round(rss0), "rss_settled_mb": rss,
                "settled_s": settled_s}  # fmt: skip

    got = _in_thread(run)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    (SCREENSHOTS / "fair_share_uploads.json").write_text(json.dumps(got, indent=1))
    problems, relaxed = [], []
    for case in got["cases"]:
        limit = min(ANSWER_LIMIT_S, RATIO * max(case["base_max_ms"] / 1e3, BASE_FLOOR_S))
        problems += _upload_problems(case, limit, WORKERS_MEMORY_BYTES // 2**20, relaxed)
    with capsys.disabled():  # in the run's output, passed or not
        for line in relaxed or ["relaxed: none (every attacker's upload loaded)"]:
            print(f"\nfair share (uploads) {line}")
    if not psutil.pid_exists(server.pid):
        problems.append("the server died")
    if got["rss_settled_mb"] > got["rss_before_mb"] + RSS_WITHIN_MB:
        problems.append(
            f"the server's RSS went from {got['rss_before_mb']} MB to {got['rss_settled_mb']} MB "
            f"and stayed there {got['settled_s']} s after the attackers closed their tabs"
        )
    assert not problems, f"{problems}\n{json.dumps(got, indent=1)[:6000]}"


CHURNERS = 16


def test_sixteen_connections_opening_sessions_leave_the_class_its_share(server):
    """Issue #50: 16 connections open and close sessions in a loop for CASE_S. B's slowest
    rerun within the limits above; the server started new sessions at its line's rate
    (plus its burst) and every churner's session opened (none waited 60 s); a session
    opened meanwhile finished its first run within its turn in line (16 ahead at the
    line's rate) and OPEN_LIMIT_S; the server alive after."""
    from bench.fairshare import churn_case, student
    from ui.session_line import SESSION_BURST, SESSIONS_PER_S

    async def run() -> dict:
        await student(server, 1.0)  # warm: the server's first runs
        return await churn_case(server, CHURNERS, CASE_S, BASE_S)

    case = _in_thread(run)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    (SCREENSHOTS / "fair_share_churn.json").write_text(json.dumps(case, indent=1))
    problems = []
    limit = min(ANSWER_LIMIT_S, RATIO * max(case["base_max_ms"] / 1e3, BASE_FLOOR_S))
    if case["max_ms"] is None or case["max_ms"] / 1e3 > limit:
        problems.append(f"B's slowest rerun {case['max_ms']} ms (limit {limit:.2f} s)")
    if case["sessions"] > SESSIONS_PER_S * case["attack_s"] + SESSION_BURST + 1:
        problems.append(f"{case['sessions']} sessions started in {case['attack_s']} s")
    if case["not_opened"] or not case["sessions"]:
        problems.append(f"{case['not_opened']} churner sessions did not open")
    turn_s = CHURNERS / SESSIONS_PER_S + OPEN_LIMIT_S
    if case["open_during_s"] is None or case["open_during_s"] > turn_s:
        problems.append(f"a new session opened in {case['open_during_s']} s (limit {turn_s} s)")
    if not psutil.pid_exists(server.pid):
        problems.append("the server died")
    assert not problems, f"{problems}\n{json.dumps(case, indent=1)}"
