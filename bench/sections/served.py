"""Rows and notes of the ``served`` section: issue #24 (busy computers, ``--context``,
a served model's server memory)."""

from __future__ import annotations

import statistics

from bench.sections.format import yes

MEMORY_TARGET_MB = 3000.0  # the server's resident set over 30 sentences of T = 1,024
FLAT_MB = 100.0  # "flat": the last 10 sentences' median RSS within this of the 10 before


def growth_mb(rss_mb: list[float]) -> float:
    """How much the resident set grew over the last 20 sentences: the median of the last
    10 minus the median of the 10 before (one sentence's transient does not count; a
    leak of a gigabyte a sentence shows as 10 GB)."""
    last = rss_mb[-20:]
    half = len(last) // 2  # 10 (fewer in a quick run)
    if half == 0:
        return 0.0
    return statistics.median(last[-half:]) - statistics.median(last[:half])


def served(data: dict, results: dict) -> list[tuple]:
    """The busy-computer conversion, the --context conversion, the served model's memory."""
    out = []
    if busy := data.get("busy_conversion"):
        out.append(
            (
                f"CLI conversion of a {busy['file_mb']:.1f} MB nanoGPT checkpoint beside "
                f"{busy['loops']} busy-loop process(es), against the same computer idle",
                "busy <= 2x idle",
                f"{busy['busy_s']:.1f} s vs {busy['idle_s']:.1f} s ({busy['ratio']:.2f}x; medians)",
                yes(busy["ratio"] <= 2.0),
            )
        )
    if ctx := data.get("context"):
        out.append(
            (
                f"GPT-2-family folder ({ctx['parameters'] / 1e6:.1f}M parameters, context "
                f"{ctx['from_context']:,}) converted with `--context {ctx['context']}`",
                "the uploader accepts it",
                f"{ctx['seconds']:.1f} s, {ctx['file_mb']:.1f} MB"
                + (f"; refused: {ctx['refusal']}" if ctx["refusal"] else "; accepted"),
                yes(not ctx["refusal"]),
            )
        )
    if mem := data.get("memory"):
        grew = growth_mb(mem["rss_mb"])
        out.append(
            (
                f"Served GPT-2-small-sized model, {mem['n']} different sentences of "
                f"T = {mem.get('T', 1024):,} in one session: the server's resident set",
                f"<= {MEMORY_TARGET_MB / 1000:.0f} GB, flat over the last 20 "
                f"(+{FLAT_MB:.0f} MB at most)",
                f"at most {mem['max_rss_mb']:,.0f} MB (opened {mem['opened_mb']:,.0f} MB); "
                f"last 20: {min(mem['rss_mb'][-20:]):,.0f}-{max(mem['rss_mb'][-20:]):,.0f} MB, "
                f"median of the last 10 {grew:+,.0f} MB from the 10 before; peak "
                f"{mem['peak_mb']:,.0f} MB; {mem['median_s']:.1f} s a sentence",
                yes(mem["max_rss_mb"] <= MEMORY_TARGET_MB and grew <= FLAT_MB),
            )
        )
    return out


def served_notes(data: dict) -> list[str]:
    """How the served rows were measured."""
    if not data.get("memory"):
        return []
    return [
        "Served memory: a real server (`deploy/launch.py`, `MALLOC_ARENA_MAX=2` as `make run`) "
        "serves `bench/gpt2_small.py`'s random GPT-2-small-sized model from its cache; one "
        "session (`bench/stclient.py`) types different sentences of more than 1,024 tokens "
        "on the attention view, and the server's RSS is read after each "
        f"(`bench/served_memory.py`): {', '.join(f'{r:,.0f}' for r in data['memory']['rss_mb'])} MB."
    ]
