"""The README table's Previous column: each row's figure from the run this one replaced.

When the suite writes ``results.json`` over an earlier one, :func:`carry` renders the
earlier results with today's row code and keeps, for every row of the new table, the
measured cell of the same row then, in ``results["previous"]``::

    {"date": "<the earlier run's date>",
     "rows": {"<row name>": {"measured": "<then>", "as": "<the row's name then>"}},
     "methods": {"<section>": "<how it was measured then, where that differs>"}}

A row is the same row when its name is equal, else when its name with every number
replaced is equal and unique on both sides (``20 sessions at once ...`` then, ``30
sessions at once ...`` now); ``as`` is set only then. Sections carried over unchanged
(``--merge``) keep the Previous figures they had. Rendering reads only the stored
cells (``bench/report.py``: ``previous_cell``, ``previous_note``), so the README follows
from ``results.json`` alone.
"""

from __future__ import annotations

import re
from collections import Counter

from bench import sections
from bench.report import SECTIONS, method, rows_by_section

NUMBER = re.compile(r"\d[\d,.]*")


def shape(name: str) -> str:
    """A row name with every number replaced by ``#``."""
    return NUMBER.sub("#", name)


def match(names: list[str], old: dict[str, str]) -> dict[str, str]:
    """New row name -> old row name: equal names, else equal and unique shapes."""
    new_shapes = Counter(shape(n) for n in names)
    old_by_shape: dict[str, list[str]] = {}
    for name in old:
        old_by_shape.setdefault(shape(name), []).append(name)
    out = {}
    for name in names:
        if name in old:
            out[name] = name
        elif new_shapes[shape(name)] == 1 and len(old_by_shape.get(shape(name), [])) == 1:
            out[name] = old_by_shape[shape(name)][0]
    return out


def carry(results: dict, old: dict | None, rerun: set[str]) -> dict:
    """``results["previous"]`` for ``results`` replacing ``old``.

    Args:
        results: the new results (every section present, rerun or carried over).
        old: the results.json being replaced (None: there was none).
        rerun: the sections measured in this run; the others were carried over from
            ``old`` and keep ``old``'s Previous figures.

    Returns:
        ``{"date", "rows"}`` (see the module docstring); empty ``rows`` without ``old``.
    """
    if not old:
        return {"date": None, "rows": {}}
    methods = {
        name: method(name, old[name])
        for name in rerun
        if name in old
        and name in results
        and method(name, old[name]) != method(name, results[name])
    }
    then = {name: measured for rows in _old_rows(old).values() for name, _, measured, _ in rows}
    kept = (old.get("previous") or {}).get("rows", {})
    out: dict[str, dict] = {}
    for section, rows in rows_by_section(results).items():
        names = [name for name, *_ in rows]
        if section not in rerun:
            out |= {name: kept[name] for name in names if name in kept}
            continue
        for name, was in match(names, then).items():
            out[name] = {"measured": then[was]} | ({"as": was} if was != name else {})
    date = (old.get("machine") or {}).get("date")
    return {"date": date, "rows": out} | ({"methods": methods} if methods else {})


def _old_rows(old: dict) -> dict[str, list[tuple[str, str, str, str]]]:
    """``rows_by_section(old)``, leaving out a section whose old results today's row code
    cannot read (a field it now measures was not there): its rows get no Previous figure
    instead of the bench failing after its measurements."""
    out = {}
    for name in SECTIONS:
        try:
            out[name] = getattr(sections, name)(old[name], old) if old.get(name) else []
        except (KeyError, TypeError, IndexError, ValueError):
            continue
    return out
