"""The bench's measurements, shipped with the app: ``python -m bench`` writes
``bench/results/results.json`` (scaling of the fast graphs with T, generation speed), and
the Complexity page opens with them before anyone presses Measure.

Only the file is read (``ui`` never imports ``bench``): the same dicts
``inference.measure.scaling`` and ``inference.generation.generation`` return, which the
page's live Measure draws with the same figures.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

RESULTS = Path(__file__).resolve().parents[1] / "bench" / "results" / "results.json"
KINDS = ("softmax", "linear")
SCALING_KEYS = ("T", "median_ms", "p95_ms", "peak_mb", "slope")


@dataclass(frozen=True)
class Shipped:
    """The bench's ``results`` (``scaling``, ``generation`` when measured, ``provider``)
    and ``where``: one sentence on when and on what machine they were measured."""

    results: dict
    where: str


def _scaling_ok(sc: object) -> bool:
    return isinstance(sc, dict) and all(
        isinstance(sc.get(k), dict) and all(key in sc[k] for key in SCALING_KEYS) for k in KINDS
    ) and "ratio" in sc  # fmt: skip


def _date(data: dict, section: str) -> str:
    """The day a section was measured: a section carried over from an earlier run keeps
    that run's date (``carried_over``), the others are the latest run's."""
    when = (data.get("carried_over") or {}).get(section) or data["machine"].get("date", "")
    return str(when)[:10] or "an unknown date"


def _where(data: dict, has_generation: bool) -> str:
    machine = data["machine"]
    cpu, cores = machine.get("cpu", "a CPU"), machine.get("cores", "?")
    provider = machine.get("provider_active", "onnxruntime")
    dates = f"time and memory on {_date(data, 'scaling')}"
    if has_generation:
        dates += f", generation on {_date(data, 'generation')}"
    return (
        f"Measured by the bench (`python -m bench`, bench/results/results.json) on {cpu}, "
        f"{cores} cores, {provider}: {dates}. These are the shipped numbers; press "
        "**Measure** to time the models on this server now."
    )


def _read(path: Path, mtime: float) -> Shipped | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("machine"), dict):
        return None
    if not _scaling_ok(sc := data.get("scaling")):
        return None
    results = {"scaling": sc, "provider": data["machine"].get("provider_active", "?")}
    gen = data.get("generation")
    if isinstance(gen, dict) and "speedup_vs_kv_cache" in gen:
        results["generation"] = gen
    else:
        results["generation_missing"] = "the bench did not measure generation"
    return Shipped(results, _where(data, "generation" in results))


_cached = st.cache_data(show_spinner=False, max_entries=2)(_read)


def load(path: Path = RESULTS) -> Shipped | None:
    """The bench's measurements in ``path``, or None when the file is missing, unreadable
    or lacks either model's scaling (read again when the file changes)."""
    try:
        mtime = path.stat().st_mtime
    except OSError:
        return None
    return _cached(path, mtime)
