"""Markdown rows ``(benchmark, target, measured, met)`` and notes, one pair per section.

Used by ``bench/report.py``. Each ``<section>(data, results)`` reads that section of
``results.json``; each ``<section>_notes(data)`` returns sentences for under the table.
They read what the current suite writes (earlier results: git's history of results.json).

One module per section (``latency``, ``speed``: inference and scaling, ``generation``:
generation and memory, ``concurrency``, ``browser`` and ``classroom``: a real server, ``isolation``,
``fair_share``: attacks on a real server,
``lab``: ablation and patching, ``translation``: the encoder-decoder lesson's models, ``checkpoints``: real checkpoints,
``served``: issue #24's busy computer, ``--context`` and served memory);
``format`` holds what they share.
"""

from bench.sections.browser import browser, browser_notes, classroom, classroom_notes
from bench.sections.checkpoints import checkpoints, checkpoints_notes
from bench.sections.concurrency import concurrency, concurrency_notes
from bench.sections.fair_share import fair_share, fair_share_notes
from bench.sections.generation import generation, generation_notes, memory, memory_notes
from bench.sections.isolation import isolation, isolation_notes
from bench.sections.lab import lab, lab_notes
from bench.sections.latency import latency, latency_notes
from bench.sections.served import served, served_notes
from bench.sections.speed import inference, scaling, scaling_notes
from bench.sections.translation import translation, translation_notes

__all__ = [
    "browser",
    "browser_notes",
    "checkpoints",
    "checkpoints_notes",
    "classroom",
    "classroom_notes",
    "concurrency",
    "concurrency_notes",
    "fair_share",
    "fair_share_notes",
    "generation",
    "generation_notes",
    "inference",
    "isolation",
    "isolation_notes",
    "lab",
    "lab_notes",
    "latency",
    "latency_notes",
    "memory",
    "memory_notes",
    "scaling",
    "served",
    "served_notes",
    "scaling_notes",
    "translation",
    "translation_notes",
]
