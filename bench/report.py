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
)
PLOTS_URL = "bench/results"  # where the README links the PNGs (relative to the repo root)


def method(name: str, data: dict) -> str | None:
    """How a section was measured, where its data says so (``method``, or the section's
    own ``<name>_method``)."""
    how = getattr(sections, f"{name}_method", None)
    return how(data) if how else data.get("method")


def rows_by_section(results: dict) -> dict[str, list[tuple[str, str, str, str]]]:
    """Section -> its ``(benchmark, target, measured, met)`` rows, for every section present."""
    return {
        name: getattr(sections, name)(results[name], results)
        for name in SECTIONS
        if results.get(name)
    }


def rows(results: dict) -> list[tuple[str, str, str, str]]:
    """``(benchmark, target, measured, met)`` rows for every section present."""
    return [row for section in rows_by_section(results).values() for row in section]


def notes(results: dict) -> list[str]:
    """Sentences under the table: what each baseline is, and where the time goes."""
    out = []
    for name in SECTIONS:
        if (section := results.get(name)) and hasattr(sections, f"{name}_notes"):
            out += getattr(sections, f"{name}_notes")(section)
    if carried := results.get("carried_over"):
        which = ", ".join(f"{k} (measured {v or '?'})" for k, v in carried.items())
        out.append(f"Carried over from earlier runs with `--merge`, not rerun: {which}.")
    out += previous_note(results)
    if err := results.get("plots_error"):
        out.append(f"Plots were not written: {err}")
    return out


def render(results: dict) -> str:
    """Markdown: the machine line, a table of target, measured, the previous figure and
    met, then notes."""
    m = results.get("machine", {})
    head = (
        f"Measured {m.get('date', '?')} on {m.get('cpu', '?')} ({m.get('cores', '?')} cores), "
        f"onnxruntime {m.get('onnxruntime', '?')} on **{m.get('provider_active', '?')}**, "
        f"torch {m.get('torch', '?')}. {m.get('note', '')}."
    )
    if results.get("quick"):
        head += " **Quick run (tiny sizes): not benchmark numbers.**"
    lines = [
        head,
        "",
        "| Benchmark | Target | Measured | Previous | Met |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {a} | {b} | {c} | {previous_cell(results, a)} | {d} |" for a, b, c, d in rows(results)
    ]
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


def previous_cell(results: dict, name: str) -> str:
    """The Previous cell of row ``name``: the figure then, and its name if it changed."""
    row = ((results.get("previous") or {}).get("rows") or {}).get(name)
    if not row:
        return "—"
    return row["measured"] + (f" (as “{row['as']}”)" if row.get("as") else "")


def previous_note(results: dict) -> list[str]:
    """The sentence under the table that says where the Previous column comes from."""
    prev = results.get("previous")
    if not prev:
        return []
    if not prev.get("rows"):
        return ["Previous: — (no earlier results.json was replaced by this run)."]
    out = [
        f"Previous: the figures of the results.json this run replaced (measured "
        f"{prev.get('date') or '?'}), rendered with today's row code; a renamed row says "
        "what it was called then; a section carried over with `--merge` keeps its own "
        "Previous figures."
    ]
    for section, how in (prev.get("methods") or {}).items():
        out.append(f"Previous {section} figures were measured otherwise: {how}.")
    return out
