"""Rows and notes of the ``concurrency`` section: classroom sessions on one server."""

from __future__ import annotations

from bench.sections.format import _mp, yes


def concurrency(con: dict, results: dict) -> list[tuple]:
    """Correct results, latency alone and together, throughput, memory growth."""
    sessions = con.get("sessions", "?")
    if err := con.get("error"):
        first = err.strip().splitlines()[-1] if err.strip() else err
        return [(f"{sessions} concurrent sessions", "runs", f"failed: {first[:200]}", "**no**")]
    lat, reruns, target = con["latency"] or {}, con["reruns"], con["target_growth_mb"]
    growth, half = con["growth_mb"], con.get("growth_second_half_mb")
    out = [
        (
            f"{sessions} sessions, {reruns} reruns: own correct result",
            "0 wrong",
            f"{con['wrong_results']} wrong, {len(con['errors'])} errors",
            yes(con["wrong_results"] == 0 and not con["errors"]),
        )
    ]
    if single := con.get("single_session"):
        rate = single.get("throughput_per_s")
        out.append(
            (
                f"One session alone ({single.get('model', '?')} model): rerun latency",
                "reported",
                f"{_mp(single['latency'])}" + (f"; {rate:.1f} reruns/s" if rate else ""),
                "",
            )
        )
    rate = con.get("throughput_per_s")
    out.append(
        (
            f"{sessions} sessions at once: rerun latency",
            "reported",
            _mp(lat) + (f"; {rate:.1f} reruns/s in total" if rate else ""),
            "",
        )
    )
    out.append(
        (
            f"Memory growth over {reruns} reruns",
            f"< {target:.0f} MB",
            "n/a" if growth is None else f"{growth:.1f} MB",
            yes(None if growth is None else growth < target),
        )
    )
    if half is not None:
        out.append(
            (
                "Memory growth, second half of the reruns (leak indicator)",
                "reported",
                f"{half:.1f} MB",
                "",
            )
        )
    return out


def concurrency_notes(con: dict) -> list[str]:
    """Why the concurrent latency is queueing, and how memory was read."""
    out = [f"Concurrency: {con['latency_note']}."] if con.get("latency_note") else []
    how = con.get("rss_readings")
    arena = con.get("malloc_arena_max")
    if how:
        out.append(f"Concurrency RSS readings: {how}; MALLOC_ARENA_MAX={arena or 'unset'}.")
    return out
