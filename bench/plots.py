"""Write the benchmark figures: interactive plotly HTML and a PNG of the same figure (kaleido)."""

from __future__ import annotations

from pathlib import Path

import plotly.graph_objects as go

from viz import complexity as vc


def figures(results: dict) -> dict[str, go.Figure]:
    """name -> figure for every result section present (scaling, generation, memory)."""
    figs = {}
    if "scaling" in results:
        figs["scaling_time"] = vc.scaling_time(results["scaling"])
        if any(results["scaling"].get(k, {}).get("peak_mb") for k in ("softmax", "linear")):
            figs["scaling_memory"] = vc.scaling_memory(results["scaling"])
    if "generation" in results:
        figs["generation_speed"] = vc.generation_speed(results["generation"])
    if "memory" in results:
        figs["carried_memory"] = vc.carried_memory(results["memory"])
    return figs


def figure_png(fig: go.Figure, path: Path) -> Path:
    """Write ``fig`` as a 900 x 560 PNG with kaleido, which renders through Chromium.

    Raises:
        RuntimeError: no Chromium for kaleido to drive (``make chromium`` installs Debian's).
    """
    try:
        fig.write_image(path, width=900, height=560, scale=1)
    except Exception as err:  # kaleido's errors differ by version; name the usual cause
        raise RuntimeError(
            f"could not write {path.name}: kaleido needs a Chromium browser "
            "(`make chromium` installs Debian's): " + str(err)
        ) from err
    return path


def write_plots(results: dict, out: Path) -> list[Path]:
    """Write ``<name>.html`` (plotly, loads plotly.js from its CDN) and ``<name>.png``."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, fig in figures(results).items():
        html = out / f"{name}.html"
        fig.write_html(html, include_plotlyjs="cdn")
        written.append(html)
        written.append(figure_png(fig, out / f"{name}.png"))
    return written
