"""Write the benchmark figures: interactive plotly HTML and a PNG of the same figure (kaleido)."""

from __future__ import annotations

from pathlib import Path

import plotly.graph_objects as go
import plotly.io as pio

from bench.common import BENCH_KINDS as SHIPPED_KINDS
from viz import complexity as vc


def figure_names(results: dict) -> list[str]:
    """Names of the figures ``results`` has data for (``scaling_time``, ...): file stems."""
    names = []
    if "scaling" in results:
        names.append("scaling_time")
        sc = results["scaling"]
        if any(all(sc.get(k, {}).get("peak_mb") or [None]) for k in SHIPPED_KINDS):
            names.append("scaling_memory")
    names += [name for key, name in _SECTION_FIGURE.items() if key in results]
    return names


_SECTION_FIGURE = {"generation": "generation_speed", "memory": "carried_memory"}
_BUILDERS = {
    "scaling_time": lambda r: vc.scaling_time(r["scaling"]),
    "scaling_memory": lambda r: vc.scaling_memory(r["scaling"]),
    "generation_speed": lambda r: vc.generation_speed(r["generation"]),
    "carried_memory": lambda r: vc.carried_memory(r["memory"]),
}


def figures(results: dict) -> dict[str, go.Figure]:
    """name -> figure for every result section present (scaling, generation, memory)."""
    return {name: _BUILDERS[name](results) for name in figure_names(results)}


def figure_png(fig: go.Figure, path: Path) -> Path:
    """Write ``fig`` as a 900 x 560 PNG with kaleido, which renders through Chromium.

    Raises:
        RuntimeError: no Chromium for kaleido to drive (``make chromium`` installs Debian's).
    """
    return _pngs([fig], [path])[0]


def _pngs(figs: list[go.Figure], paths: list[Path]) -> list[Path]:
    """Write each figure to its path as a 900 x 560 PNG, all in one kaleido session: each
    ``write_image`` starts a Chromium of its own (measured: four figures 10.7 s one by
    one, 2.9 s together with ``plotly.io.write_images``).

    Raises:
        RuntimeError: as :func:`figure_png`.
    """
    if not figs:
        return []
    try:
        pio.write_images(figs, paths, width=900, height=560, scale=1)
    except Exception as err:  # kaleido's errors differ by version; name the usual cause
        names = ", ".join(p.name for p in paths)
        raise RuntimeError(
            f"could not write {names}: kaleido needs a Chromium browser "
            "(`make chromium` installs Debian's): " + str(err)
        ) from err
    return paths


def write_plots(results: dict, out: Path) -> list[Path]:
    """Write ``<name>.png`` for each plot (no HTML: plotly's would load plotly.js from
    its CDN, and nothing here fetches anything)."""
    out.mkdir(parents=True, exist_ok=True)
    figs = figures(results)
    return _pngs(list(figs.values()), [out / f"{name}.png" for name in figs])
