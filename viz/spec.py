"""Plain plotly figure specs: ``{"data": [trace dicts], "layout": {...}}``.

plotly.js draws such a dict as it is. Building it as a ``go.Figure`` instead runs
plotly.py's per-property validation on every trace and axis, which cost more than
the data itself (12-60 ms a figure at T = 64, several figures a rerun); the specs
here are checked once, in the tests, by ``go.Figure(spec)``.

``wire`` turns the numpy arrays of a spec into plotly.js typed arrays
(``{"dtype": "f4", "bdata": base64, "shape": "T, T"}``, plotly.js >= 2.28), the
compact form plotly.py itself sends, so that a cached spec is plain JSON.

``vega_lite`` does the same for the altair charts: the Vega-Lite spec with each
DataFrame as Arrow IPC bytes, which is what ``st.altair_chart`` computes (and
validates against the Vega-Lite schema) on every call; ``st.vega_lite_chart`` takes
the result as it is.
"""

from __future__ import annotations

import base64
import hashlib
import threading

import altair as alt
import numpy as np
import pyarrow as pa

from viz import style

Spec = dict  # {"data": [trace dicts], "layout": dict}


class Wired(dict):
    """A spec (or Vega-Lite spec) that :func:`wired` made plain JSON: not walked again."""


_DTYPES = {
    "float32": "f4",
    "float64": "f8",
    "int8": "i1",
    "uint8": "u1",
    "int16": "i2",
    "uint16": "u2",
    "int32": "i4",
    "uint32": "u4",
}


def merge(base: dict, extra: dict) -> dict:
    """A new dict: ``base`` updated by ``extra``, nested dicts merged key by key."""
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def figure(
    data: list[dict], layout: dict, title: str | None = None, height: int | None = None
) -> Spec:
    """A spec with the shared projector styling (``viz.style.layout``) under ``layout``.

    Args:
        data: trace dicts (``{"type": "heatmap", "z": array, ...}``).
        layout: this figure's own layout; it wins over the shared styling.
        title: figure title (plotly HTML: escape user text with ``style.escape``).
        height: figure height in px.
    """
    return {"data": data, "layout": merge(style.layout(title, height), layout)}


def titled(text: str) -> dict:
    """``{"title": {"text": text}}``: an axis title."""
    return {"title": {"text": text}}


def heat_axes(**x_extra: object) -> tuple[dict, dict]:
    """(xaxis, yaxis) of a heatmap: categorical, first row (token) at the top."""
    x = {"type": "category", "tickangle": -45, "automargin": True, **x_extra}
    return x, {"autorange": "reversed", "type": "category", "automargin": True}


def square_cells(fig: Spec) -> Spec:
    """``fig`` with every heatmap's cells square (#44 item 1): each heatmap's y axis is
    tied to its x axis at one px a unit to one (``scaleanchor``), and both give up part of
    their domain rather than stretch a cell (``constrain``). ``ui/square.js`` then picks
    the figure's height (and, when the room is short, its width) so that the square
    heatmap is as large as the width and the screen allow. Returns ``fig``, changed."""
    layout = fig["layout"]
    for trace in fig["data"]:
        if trace.get("type") != "heatmap":
            continue
        x, y = trace.get("xaxis") or "x", trace.get("yaxis") or "y"
        x_key, y_key = f"xaxis{x[1:]}", f"yaxis{y[1:]}"
        layout[x_key] = {**layout.get(x_key, {}), "constrain": "domain"}
        layout[y_key] = {**layout.get(y_key, {}), "scaleanchor": x, "scaleratio": 1,
                         "constrain": "domain"}  # fmt: skip
    return fig


def square_figure(fig):
    """:func:`square_cells` for a ``go.Figure`` (the lessons' and Translate's figures).
    Returns ``fig``, changed."""
    layout: dict = {}
    for trace in fig.data:
        if trace.type == "heatmap":
            x, y = trace.xaxis or "x", trace.yaxis or "y"
            layout[f"xaxis{x[1:]}"] = {"constrain": "domain"}
            layout[f"yaxis{y[1:]}"] = {"scaleanchor": x, "scaleratio": 1, "constrain": "domain"}
    fig.update_layout(layout)
    return fig


def subplot_title(text: str, x: float, y: float) -> dict:
    """A subplot title centred at paper x, sitting on paper y."""
    return {
        "text": text,
        "x": x,
        "y": y,
        "xref": "paper",
        "yref": "paper",
        "xanchor": "center",
        "yanchor": "bottom",
        "showarrow": False,
        "font": {"size": style.SUBPLOT_TITLE_SIZE},
    }


def typed_array(array: np.ndarray) -> dict | list:
    """A numeric array as a plotly.js typed array (same values, same dtype; int64 as
    int32 where it fits, as plotly.py does); any other array as a nested list."""
    arr = np.asarray(array)
    if arr.dtype == np.int64 and arr.size and -(2**31) <= arr.min() and arr.max() < 2**31:
        arr = arr.astype(np.int32)
    code = _DTYPES.get(str(arr.dtype))
    if code is None or arr.size == 0:
        return arr.tolist()
    out = {"dtype": code, "bdata": base64.b64encode(np.ascontiguousarray(arr)).decode("ascii")}
    if arr.ndim > 1:
        out["shape"] = ", ".join(str(n) for n in arr.shape)
    return out


def wired(spec: dict) -> Wired:
    """``spec`` as plain JSON types (:func:`wire`), marked so that it is not walked
    again; a :class:`Wired` spec is returned as it is."""
    return spec if isinstance(spec, Wired) else Wired(wire(spec))


_PLAIN = {str, int, float, bool, type(None)}  # JSON's own leaf types


def wire(value):
    """``value`` (a spec or any part of it) as plain JSON types: numpy arrays become
    typed arrays (:func:`typed_array`), numpy scalars Python numbers. Idempotent."""
    if isinstance(value, dict):
        return {k: wire(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        kinds = set(map(type, value))  # one C loop (hover texts: T² of them)
        if kinds <= _PLAIN:  # labels, hover text, numbers: already plain
            return value if isinstance(value, list) else list(value)
        return [wire(v) for v in value]
    if isinstance(value, np.ndarray):
        return typed_array(value)
    if isinstance(value, np.generic):
        return value.item()
    return value


def arrow_bytes(frame) -> bytes:
    """A DataFrame as Arrow IPC stream bytes (how Streamlit ships tables and chart data)."""
    table = pa.Table.from_pandas(frame)
    sink = pa.BufferOutputStream()
    with pa.RecordBatchStreamWriter(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


_ALTAIR = threading.Lock()  # altair's theme and data transformer are process-wide


def vega_lite(chart: alt.TopLevelMixin) -> dict:
    """The Vega-Lite spec of an altair chart as ``st.altair_chart`` builds it: altair's
    ``to_dict()`` under the ``"none"`` theme, every DataFrame moved to
    ``spec["datasets"]`` as Arrow IPC bytes named by their MD5 hash; without the
    schema validation ``st.altair_chart`` runs on every call."""
    datasets: dict[str, bytes] = {}

    def to_arrow(data) -> dict:
        payload = arrow_bytes(data)
        name = hashlib.md5(payload, usedforsecurity=False).hexdigest()
        datasets[name] = payload
        return {"name": name}

    alt.data_transformers.register("arrow_datasets", to_arrow)
    with _ALTAIR, alt.theme.enable("none"), alt.data_transformers.enable("arrow_datasets"):
        # The charts are ours and checked once in the tests (viz/positional's builders,
        # to_dict() with validation); the schema check doubled the cost.
        out = chart.to_dict(validate=False)
    out["datasets"] = {**out.get("datasets", {}), **datasets}
    return out
