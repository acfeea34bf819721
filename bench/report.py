"""Render ``results.json`` as markdown (target, measured, met?) for ``summary.md`` and
the project README's ``<!-- bench:start -->`` ... ``<!-- bench:end -->`` section."""

from __future__ import annotations

import json
from pathlib import Path

from bench import sections

START, END = "<!-- bench:start -->", "<!-- bench:end -->"
# The order of the table and of the notes (bench/suite.py runs them in this order too).
SECTIONS = (
    "latency",
    "inference",
    "scaling",
    "generation",
    "memory",
    "concurrency",
    "browser",
    "classroom",
    "isolation",
    "fair_share",
    "checkpoints",
    "translation",
    "served",
    "lab",
)
PLOTS_URL = "bench/results"  # where the README links the PNGs (relative to the repo root)


def rows(results: dict) -> list[tuple[str, str, str, str]]:
    """``(benchmark, target, measured, met)`` rows for every section present."""
    return [
        row
        for name in SECTIONS
        if results.get(name)
        for row in getattr(sections, name)(results[name], results)
    ]


def notes(results: dict) -> list[str]:
    """Sentences under the table: what each baseline is, and where the time goes."""
    out = []
    for name in SECTIONS:
        if (section := results.get(name)) and hasattr(sections, f"{name}_notes"):
            out += getattr(sections, f"{name}_notes")(section)
    if carried := results.get("carried_over"):
        which = ", ".join(f"{k} (measured {v or '?'})" for k, v in carried.items())
        out.append(f"Carried over from earlier runs with `--merge`, not rerun: {which}.")
    if err := results.get("plots_error"):
        out.append(f"Plots were not written: {err}")
    return out


def render(results: dict) -> str:
    """Markdown: the machine line, a table of target, measured and met, then notes.
    Earlier figures are in git's history of ``bench/results/results.json``."""
    m = results.get("machine", {})
    head = (
        f"Measured {m.get('date', '?')} on {m.get('cpu', '?')} ({m.get('cores', '?')} cores), "
        f"onnxruntime {m.get('onnxruntime', '?')} on **{m.get('provider_active', '?')}**, "
        f"torch {m.get('torch', '?')}. {m.get('note', '')}."
    )
    if "speed_probe_ms_end" in m:  # suite.run writes both, the end one last
        head += (
            f" Speed probe (`bench.common.speed_probe_ms`, a fixed Python loop): "
            f"{m['speed_probe_ms_start']:.0f} ms at the start, "
            f"{m['speed_probe_ms_end']:.0f} ms at the end."
        )
    if results.get("quick"):
        head += " **Quick run (tiny sizes): not benchmark numbers.**"
    lines = [
        head,
        "",
        "| Benchmark | Target | Measured | Met |",
        "|---|---|---|---|",
    ]
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows(results)]
    if extra := notes(results):
        lines += [""] + [f"- {n}" for n in extra]
    return "\n".join(lines) + "\n"


def readme_section(results: dict) -> str:
    """What goes between the README's markers: :func:`render` plus links to the PNGs."""
    from bench.plots import figure_names

    text = render(results)
    if "plots_error" not in results:
        names = results.get("plots") or [f"{n}.png" for n in figure_names(results)]
        links = [f"[{n}]({PLOTS_URL}/{n})" for n in names]
        if links:
            text += "\nPlots: " + " · ".join(links) + "\n"
    return text


def replace_between_markers(text: str, body: str) -> str:
    """``text`` with everything between :data:`START` and :data:`END` replaced by ``body``.

    Raises:
        ValueError: if the markers are missing or out of order.
    """
    i, j = text.find(START), text.find(END)
    if i < 0 or j < i:
        raise ValueError(f"no {START} ... {END} section")
    return text[: i + len(START)] + "\n" + body + text[j:]


def between_markers(text: str) -> str:
    """The text between :data:`START` and :data:`END` (without the newline after START)."""
    i, j = text.find(START), text.find(END)
    if i < 0 or j < i:
        raise ValueError(f"no {START} ... {END} section")
    return text[i + len(START) + 1 : j]


def update_readme(readme: Path, results: dict) -> None:
    """Rewrite the benchmark section of ``readme`` from ``results``."""
    readme.write_text(replace_between_markers(readme.read_text(), readme_section(results)))


def write_summary(results_json: Path, out: Path | None = None) -> Path:
    """Read ``results.json`` and write ``summary.md`` beside it (or to ``out``)."""
    results = json.loads(Path(results_json).read_text())
    out = out or Path(results_json).with_name("summary.md")
    out.write_text(render(results))
    return out
