"""Rows and notes of the ``fair_share`` section (issue #25): attacks on the server and
another session's slowest rerun meanwhile."""

from __future__ import annotations

from bench.sections.format import yes
from bench.stwidgets import shown

LIMIT_MS, RATIO, OPEN_S, RSS_MB = 2000.0, 3.0, 2.0, 100.0


def _other(case: dict) -> tuple[str, str, str]:
    """(target, measured, met) of the other session's slowest rerun in ``case``."""
    worst, base = case.get("max_ms"), case.get("base_max_ms")
    if worst is None:
        return f"<= {LIMIT_MS:,.0f} ms and <= {RATIO:g}x baseline", "no answer", yes(False)
    ratio = worst / max(base, 1)
    met = worst <= LIMIT_MS and ratio <= RATIO
    target = f"<= {LIMIT_MS:,.0f} ms and <= {RATIO:g}x its baseline"
    measured = (
        f"{worst:,} ms of {case['reruns']} "
        f"(baseline {base:,} ms of {case['base_reruns']}, {ratio:.1f}x)"
    )
    return target, measured, yes(met)


def fair_share(data: dict, results: dict) -> list[tuple]:
    """Another session during each attack; a new session; RSS; the in-process bounds."""
    out = []
    cases = [
        ("flood", "a rerun flood (500 messages/s from one websocket)"),
        ("paragraph_1", "1 session typing paragraphs of 2,000 characters of made-up words"),
        ("paragraph_3", "3 sessions typing paragraphs of made-up words"),
    ]
    for key, what in cases:
        if not (case := data.get(key)):
            continue
        out.append((f"Another session's slowest rerun during {what}", *_other(case)))
        opened = case.get("open_during_s")
        out.append(
            (
                f"A new session during {what}: first run finished",
                f"<= {OPEN_S:g} s",
                "did not open" if opened is None else f"{opened:.2f} s",
                yes(opened is not None and opened <= OPEN_S),
            )
        )
        growth = case["rss_after_mb"] - case["rss_before_mb"]
        out.append(
            (
                f"Server RSS after {what}",
                f"within {RSS_MB:.0f} MB of before",
                f"{growth:+,} MB ({case['rss_before_mb']:,} -> {case['rss_after_mb']:,} MB)",
                yes(abs(growth) <= RSS_MB),
            )
        )
    if churn := data.get("churn_16"):
        out += _churn_rows(churn)
    out += [row for case in data.get("uploads", []) for row in _upload_rows(case)]
    if lc := data.get("long_context"):
        before, now = lc["unbounded"], lc["budget"]
        out.append(
            (
                f"An uploaded model ({lc['config']}) on 2,000 characters: analysis in the server",
                "cut to the budget; RSS back within 100 MB",
                f"T = {now['T']} (was {before['T']}): {now['s']} s, peak +{now['peak_mb']} MB "
                f"(was {before['s']} s, +{before['peak_mb']} MB); after, trimmed: "
                f"{now['after_trim_mb']:+} MB (untrimmed {now['after_mb']:+} MB)",
                yes(now["after_trim_mb"] <= RSS_MB),
            )
        )
    if sug := data.get("suggestions"):
        out.append(
            (
                "Analysis of 2,000 characters of made-up words (suggestions included)",
                "well under 1 s (was 10-17 s)",
                f"max {sug['paragraph_max_s'] * 1e3:,.0f} ms of 5",
                yes(sug["paragraph_max_s"] < 1.0),
            )
        )
        out.append(
            (
                f"30 unknown words against a {sug['vocab']:,}-word vocabulary",
                "bounded (was 1.3 s per word)",
                f"{sug['vocab_request_s']} s per request; index built once in "
                f"{sug['index_build_s']} s",
                yes(sug["vocab_request_s"] < 2.0),
            )
        )
    return out


UPLOAD_CASES = {  # bench/fairshare_uploads.py's cases, as the rows name them
    "huge vocabulary": "an upload with a 262,144-word vocabulary, then 30 unknown words",
    "long context": "an upload with a context of 2,048, then 2,000 characters",
    "slow graph": "an uploaded ONNX graph that runs for minutes at 6 tokens",
    "ten uploads": "ten sessions uploading an ONNX graph at once (ten workers kept)",
    "ten checkpoints": "ten sessions uploading ten checkpoints at once (ten exports)",
}


def _churn_rows(case: dict) -> list[tuple]:
    """Rows of the session churn (issue #50): the other session, the sessions the churners
    opened, a new session (it waits its turn in the server's line), the server's RSS."""
    n, rate, burst = case["churners"], case["line_per_s"], case["line_burst"]
    what = f"{n} connections opening and closing sessions in a loop"
    opened = case.get("open_during_s")
    wait_s = n / rate + OPEN_S  # the churners ahead of it in line, then its first run
    growth = case["rss_after_mb"] - case["rss_before_mb"]
    return [
        (f"Another session's slowest rerun during {what}", *_other(case)),
        (
            f"Sessions the {n} connections opened (the server's line: {rate:g} new a second)",
            f"at most {rate:g} a second (after a burst of {burst}), every one opened",
            f"{case['sessions']:,} in {case['attack_s']:g} s ({case['sessions_per_s']:g} a "
            f"second), {case['not_opened']} not opened within 60 s",
            yes(case["sessions"] <= rate * case["attack_s"] + burst and not case["not_opened"]),
        ),
        (
            f"A new session during {what}: first run finished",
            f"<= {wait_s:.1f} s (its turn behind {n} in line, then {OPEN_S:g} s)",
            "did not open" if opened is None else f"{opened:.2f} s",
            yes(opened is not None and opened <= wait_s),
        ),
        (
            f"Server RSS after {what}",
            f"within {RSS_MB:.0f} MB of before",
            f"{growth:+,} MB ({case['rss_before_mb']:,} -> {case['rss_after_mb']:,} MB)",
            yes(abs(growth) <= RSS_MB),
        ),
    ]


def _upload_rows(case: dict) -> list[tuple]:
    """Rows of one upload case: the other session, a new session, the workers' memory,
    what the attackers saw, the server's RSS."""
    what = UPLOAD_CASES.get(case["case"], case["case"])
    opened = case.get("open_during_s")
    loaded = [a for a in case["attackers"] if a.get("model") == "upload"]
    lines = sorted({shown(x) for a in case["attackers"] for x in a.get("sentence_said", [])})
    seen = f"; it saw: {lines[0][:120]}" if len(lines) == 1 else ""
    growth = case["rss_after_mb"] - case["rss_before_mb"]
    budget = case.get("workers_budget_mb")
    return [
        (f"Another session's slowest rerun during {what}", *_other(case)),
        (
            f"A new session during {what}: first run finished",
            f"<= {OPEN_S:g} s",
            "did not open" if opened is None else f"{opened:.2f} s",
            yes(opened is not None and opened <= OPEN_S),
        ),
        (
            f"Upload workers' total RSS during {what} (peak)",
            "within the workers' budget" + (f" ({budget:,} MB)" if budget else ""),
            f"{case['workers_peak_mb']:,} MB in {case['workers_peak']} process(es)",
            yes(budget is None or case["workers_peak_mb"] <= budget),
        ),
        (
            f"Attackers loaded and answered, {what}",
            "every one, errors in one line",
            f"{len(loaded)} of {len(case['attackers'])} loaded, slowest "
            f"{max((a.get('load_s', 0) for a in case['attackers']), default=0):.0f} s{seen}",
            yes(len(loaded) == len(case["attackers"])),
        ),
        _settled_row(case, what, growth),
    ]


def _settled_row(case: dict, what: str, growth: int) -> tuple:
    """The server's RSS once the attackers' closed sessions were dropped."""
    settled = case["rss_settled_mb"] - case["rss_before_mb"]
    return (
        f"Server RSS after {what}, once the attackers closed their tabs",
        f"within {RSS_MB:.0f} MB of before",
        f"{settled:+,} MB after {case['settled_s']:.0f} s ({case['rss_before_mb']:,} -> "
        f"{case['rss_settled_mb']:,} MB; {growth:+,} MB while their sessions were kept)",
        yes(abs(settled) <= RSS_MB),
    )


def fair_share_notes(data: dict) -> list[str]:
    """How the attacks were made and measured."""
    if not data:
        return []
    m = data.get("machine", {})
    where = (
        f" Measured {m.get('date', '?')} on {m.get('cpu', '?')} ({m.get('cores', '?')} cores), "
        f"load average {m.get('loadavg_start', ['?'])[0]:.1f} at the start (other jobs)."
        if m
        else ""
    )
    return [
        "Fair share: a real `streamlit run app.py`; attackers and the other student are "
        "websocket sessions (`bench/stclient.py`); the other student alternates a head "
        "change and a new sentence, 0.3 s after each answer (under the server's 4 reruns a "
        "second), and times each rerun, alone just before (its baseline, about as long as "
        "the attack, so that both maxima are over as many reruns) and during the "
        "attack. The uploaded model's analysis and the suggestions are "
        "measured in a fresh process as the server runs them (`bench/fairshare.py`)." + where
    ] + _churn_note(data.get("churn_16"))


def _churn_note(case: dict | None) -> list[str]:
    """How the session churn was measured, and what it did before the server's line."""
    if not case:
        return []
    return [
        "Session churn (issue #50): 16 websocket connections each open a session, wait for "
        "its first run and close it, in a loop, for 20 s; measured on its own "
        f"(`python -m bench.fairshare_uploads --churn`, {case.get('date', '?')}, load average "
        f"{case.get('loadavg_start', 0):.1f}). Before the server's line of new sessions "
        "(`ui/session_line.py`), on the same 2-core machine, they started 17-42 sessions a "
        "second and the other session's slowest rerun rose to 3.9-6.4x its baseline (issue "
        "#50's report: 8.9x)."
    ]
