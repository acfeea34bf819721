"""Rows and notes of the ``concurrency`` section: classroom sessions on one real server,
driven over its websocket (``bench/concurrency.py``).

``concurrency`` sections written before the real-server version (AppTest sessions on a
mock runtime; they typed sentences only) render under the same row names, so their
figures can stand in the Previous column.
"""

from __future__ import annotations

from bench.sections.format import _mp, ms, yes

APPTEST_METHOD = (
    "AppTest sessions of app.py in threads of one process, on a mock runtime (no server, "
    "no websocket), each typing its own sentences"
)
HEAD, SENTENCE = "layer/head change", "new sentence"


def _target(con: dict, key: str, default: float | None = None) -> float | None:
    return con.get("targets", {}).get(key, default)


def _median_p95(lat: dict | None, median: float | None, p95: float | None):
    if not lat or median is None or p95 is None:
        return None
    return lat["median_ms"] <= median and lat["p95_ms"] <= p95


def concurrency(con: dict, results: dict) -> list[tuple]:
    """Correct results; one session alone; all at once; throughput; server memory."""
    n, reruns = con.get("sessions", "?"), con.get("reruns", "?")
    if err := con.get("error"):
        first = err.strip().splitlines()[-1] if err.strip() else err
        return [(f"{n} concurrent sessions", "runs", f"failed: {first[:200]}", "**no**")]
    out = [
        (
            f"{n} sessions, {reruns} reruns: own correct result",
            "0 wrong",
            f"{con['wrong_results']} wrong, {len(con['errors'])} errors",
            yes(con["wrong_results"] == 0 and not con["errors"]),
        )
    ]
    single = con.get("single_session") or {}
    model = single.get("model", "?")
    by_action = single.get("latency_by_action")
    if head := (by_action or {}).get(HEAD):
        target = _target(con, "single_head_change_median_ms")
        out.append(
            (
                f"One session alone ({model} model): rerun after a layer/head change",
                f"median <= {target:.0f} ms" if target else "reported",
                _mp(head),
                yes(head["median_ms"] <= target) if target else "",
            )
        )
    if sentence := (by_action or {}).get(SENTENCE):
        out.append(
            (
                f"One session alone ({model} model): rerun after a new sentence",
                "reported",
                _mp(sentence),
                "",
            )
        )
    out += _together(con, n)
    growth, target = con.get("growth_mb"), con.get("target_growth_mb", 50.0)
    out.append(
        (
            f"Memory growth over {reruns} reruns",
            f"< {target:.0f} MB",
            "n/a" if growth is None else f"{growth:.1f} MB",
            yes(None if growth is None else growth < target),
        )
    )
    if (half := con.get("growth_second_half_mb")) is not None:
        name = "Memory growth, second half of the reruns (leak indicator)"
        out.append((name, "reported", f"{half:.1f} MB", ""))
    return out


def _together(con: dict, n) -> list[tuple]:
    """All sessions at once: latency (by action) and reruns per second."""
    lat, median, p95 = con.get("latency"), _target(con, "median_ms"), _target(con, "p95_ms")
    measured = _mp(lat)
    parts = [
        f"{a} median {ms(s['median_ms'])}" for a, s in con.get("latency_by_action", {}).items()
    ]
    if parts:
        measured += f" ({'; '.join(parts)})"
    target = f"median <= {median:.0f} ms, p95 <= {p95 / 1e3:g} s" if median and p95 else "reported"
    met = _median_p95(lat, median, p95)
    out = [(f"{n} sessions at once: rerun latency", target, measured, yes(met) if median else "")]
    rate, goal = con.get("throughput_per_s"), _target(con, "throughput_per_s")
    if rate is not None:
        out.append(
            (
                f"{n} sessions at once: reruns per second in total",
                f">= {goal:.0f}/s" if goal else "reported",
                f"{rate:.1f}/s",
                yes(rate >= goal) if goal else "",
            )
        )
    return out


def concurrency_method(con: dict) -> str:
    """How the sessions were driven (results without ``method`` came from AppTest)."""
    return con.get("method") or APPTEST_METHOD


def concurrency_notes(con: dict) -> list[str]:
    """How the sessions were driven, what they did, and how memory was read."""
    out = [f"Concurrency: {concurrency_method(con)}."]
    if con.get("method"):
        out.append(
            f"Concurrency sessions: each opens a link (model, view, layer, head, text), then "
            f"alternately picks another layer/head and types a sentence, and one action in "
            f"eight visits another view (each in turn) and comes back, "
            f"{con.get('think_s', '?')} s after each answer; "
            f"{con.get('teacher_sessions', '?')} of {con.get('sessions', '?')} type the "
            "teacher's sentences, the rest their own; models alternate. A rerun is timed "
            "from sending its BackMsg to receiving script_finished; on the attention view "
            "its main heatmap is compared with a direct analyze() of that session's "
            "sentence, layer and head, on another view it must finish without an exception."
        )
    if opened := con.get("open"):
        out.append(
            f"Concurrency: all {opened['n']} sessions opening their link at once waited "
            f"{_mp(opened)} for the page ({con.get('open_wrong', 0)} showed a wrong heatmap)."
        )
    cpu, share = con.get("server_cpu_ms_per_rerun"), con.get("client_cores_used")
    if cpu is not None:
        out.append(
            f"Concurrency: the server used {ms(cpu)} of CPU per rerun; the sessions' client "
            f"(this process) used {share:.2f} cores while they ran."
        )
    if con.get("latency_note"):
        out.append(f"Concurrency: {con['latency_note']}.")
    if how := con.get("rss_readings"):
        arena = con.get("malloc_arena_max")
        out.append(f"Concurrency RSS readings: {how}; MALLOC_ARENA_MAX={arena or 'unset'}.")
    return out
