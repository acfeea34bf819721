"""Figures of the lab views: the layer x head grid one clicks to pick heads, the loss per
position before and after an ablation, a layer x position grid (residual patching, the
logit lens).

Pure functions: arrays in, a plain plotly spec out (``viz.spec``); labels are escaped.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from viz import spec, style
from viz.heat import heat_trace

CELL_PX = 56  # a head grid's cell: numbers in it readable from the back row


def head_labels(n_layer: int, n_head: int) -> tuple[list[str], list[str]]:
    """(column labels "H0".., row labels "L0"..) of a layer x head grid."""
    return [f"H{h}" for h in range(n_head)], [f"L{layer}" for layer in range(n_layer)]


def head_grid(values: object, title: str, unit: str, selected: Sequence[tuple[int, int]] = (),
              signed: bool = True) -> spec.Spec:  # fmt: skip
    """A clickable (L, H) grid of one number per head, each written in its cell.

    Args:
        values: (L, H) floats (NaN: not measured).
        title: the figure title (escaped here); unit: the colour bar's title.
        selected: (layer, head) pairs outlined in black (the heads ablated).
        signed: a diverging scale centred at 0 (a loss change), else sequential.

    Each cell carries an invisible point whose ``customdata`` is ``layer * H + head``
    (``ui.chart``: plotly heatmaps return no click, streamlit issue 8760).
    """
    z = np.asarray(values, dtype=float)  # (L, H)
    L, H = z.shape
    xs, ys = head_labels(L, H)
    colours = ({"zmid": 0.0, "colorscale": style.DIVERGING} if signed
               else {"colorscale": style.SEQUENTIAL})  # fmt: skip
    if signed:
        lo, hi = style.symmetric_range(z)
        colours.update(zmin=lo, zmax=hi)
    text = [[("" if not np.isfinite(v) else f"{v:+.2f}" if signed else f"{v:.2f}") for v in row]
            for row in z]  # fmt: skip
    heat = heat_trace(z, xs, ys, text=text, texttemplate="%{text}",
                      hovertemplate="%{y} %{x}: %{z:.3f}<extra></extra>",
                      colorbar={"title": {"text": style.escape(unit)}}, **colours)  # fmt: skip
    layer, head = np.divmod(np.arange(L * H), H)
    # text points with no text (``viz.click``): drawn as nothing, yet hovered and clicked
    points = {"type": "scatter", "mode": "text", "text": "", "name": "click",
              "x": [xs[h] for h in head], "y": [ys[v] for v in layer],
              "customdata": list(range(L * H)), "hovertext": [f"{v:.3f}" for v in z.reshape(-1)],
              "hovertemplate": "%{y} %{x}: %{hovertext}<extra></extra>", "showlegend": False}  # fmt: skip
    shapes = [{"type": "rect", "xref": "x", "yref": "y", "x0": h - 0.5, "x1": h + 0.5,
               "y0": v - 0.5, "y1": v + 0.5, "line": {"color": "black", "width": 4}}
              for v, h in selected]  # fmt: skip
    x, y = spec.heat_axes(tickangle=0)
    height = max(260, CELL_PX * L + 140)
    layout = {"xaxis": x, "yaxis": y, "shapes": shapes, "meta": {"pick": "heads"}}  # ui/chart.js
    return spec.figure([heat, points], layout, title=style.escape(title), height=height)


def loss_lines(losses: np.ndarray, tokens: Sequence[str], names: tuple[str, str]) -> spec.Spec:
    """The next-token loss (nats) at each position, two runs as two lines.

    Args:
        losses: (2, T-1): row r's column t is the loss of predicting token t+1 at t.
        tokens: the T tokens; names: the two runs' legend names.
    """
    x = [f"{i}·{style.escape(t)}→{style.escape(tokens[i + 1])}" for i, t in
         enumerate(tokens[:-1])]  # fmt: skip
    dashes = ("solid", "dash")
    data = [{"type": "scatter", "mode": "lines+markers", "x": x, "y": np.asarray(row),
             "name": style.escape(name), "line": {"width": 3, "dash": dash},
             "marker": {"size": 9}} for row, name, dash in zip(losses, names, dashes,
                                                                  strict=True)]  # fmt: skip
    layout = {
        "xaxis": {"type": "category", "tickangle": -45, "automargin": True},
        "yaxis": spec.titled("loss (nats)"),
        "legend": {"orientation": "h", "y": 1.12},
    }
    return spec.figure(data, layout, height=420)


def position_grid(values: object, tokens: Sequence[str], title: str, unit: str,
                  text: Sequence[Sequence[str]] | None = None, signed: bool = False,
                  rows: Sequence[str] | None = None) -> spec.Spec:  # fmt: skip
    """A (R, T) grid over positions: a residual boundary (or layer) per row.

    Args:
        values: (R, T) floats; tokens: the T tokens (columns).
        text: (R, T) strings written in the cells (the logit lens' top tokens), escaped here.
        rows: the row labels (default "resid 0".."resid R-1").
    """
    z = np.asarray(values, dtype=float)  # (R, T)
    R, T = z.shape
    xs = style.token_labels(tokens)
    ys = list(rows) if rows is not None else [f"resid {r}" for r in range(R)]
    colours: dict = {"colorscale": style.SEQUENTIAL, "zmin": 0.0}
    if signed:
        lo, hi = style.symmetric_range(z)
        colours = {"colorscale": style.DIVERGING, "zmid": 0.0, "zmin": lo, "zmax": hi}
    extra: dict = {}
    if text is not None:
        cells = [[style.escape(s) for s in row] for row in text]
        extra = {
            "text": cells,
            "texttemplate": "%{text}",
            "textfont": {"size": style.SMALL_TICK_SIZE},
        }
    heat = heat_trace(z, xs, ys, hovertemplate="%{y} at %{x}: %{z:.3f}<extra></extra>",
                      colorbar={"title": {"text": style.escape(unit)}}, **colours, **extra)  # fmt: skip
    x, y = spec.heat_axes()
    return spec.figure([heat], {"xaxis": x, "yaxis": y}, title=style.escape(title),
                       height=max(300, 48 * R + 200))  # fmt: skip
