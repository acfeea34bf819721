"""What the visualizer sends to the browser for each view, as plain comparable data.

``shown(at)`` reads every chart of an ``AppTest`` run: plotly figures (``data`` and
``layout``, typed arrays decoded to lists of floats), Vega-Lite charts (spec and
their Arrow datasets as records) and tables. ``test_figure_data`` compares this
with a recording made by the code before the figures were rebuilt as plain specs.
"""

from __future__ import annotations

import base64
import io
import json

import numpy as np
import pyarrow as pa

from tests.helpers.charts import plotly_charts


def decoded(value):
    """``value`` with plotly typed arrays (``{"dtype", "bdata", "shape"}``) and numbers
    as plain lists of floats, recursively."""
    if isinstance(value, dict) and "bdata" in value and "dtype" in value:
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        arr = flat.reshape([int(n) for n in str(shape).split(",")]) if shape else flat
        return arr.astype(float).tolist()
    if isinstance(value, dict):
        return {k: decoded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decoded(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return float(value)
    return value


def _records(arrow: bytes) -> list[dict]:
    table = pa.ipc.open_stream(io.BytesIO(arrow)).read_all()
    return decoded(json.loads(table.to_pandas().to_json(orient="records")))


def _vega(proto) -> dict:
    """Spec and datasets; dataset names (content hashes) become their order of appearance."""
    names = {d.name: f"data-{i}" for i, d in enumerate(proto.datasets)}
    spec = proto.spec
    for old, new in names.items():
        spec = spec.replace(old, new)
    return {
        "spec": decoded(json.loads(spec)),
        "datasets": {names[d.name]: _records(d.data.data) for d in proto.datasets},
    }


def shown(at) -> dict:
    """Every plotly chart, Vega-Lite chart and table of the page, in page order."""
    return {
        "plotly": [decoded(el.spec) for el in plotly_charts(at)],
        "vega_lite": [_vega(el.proto) for el in at.get("vega_lite_chart")],
        "tables": [
            decoded(json.loads(el.value.to_json(orient="split", index=False)))
            for el in at.dataframe
        ],
    }


def differences(old, new, path: str = "", rtol: float = 1e-6, atol: float = 1e-7) -> list[str]:
    """Paths where ``new`` differs from ``old`` (floats within ``rtol``/``atol``)."""
    if isinstance(old, dict) and isinstance(new, dict):
        out = [f"{path}.{k}: only before" for k in old.keys() - new.keys()]
        out += [f"{path}.{k}: only after" for k in new.keys() - old.keys()]
        for k in old.keys() & new.keys():
            out += differences(old[k], new[k], f"{path}.{k}", rtol, atol)
        return out
    if isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            return [f"{path}: length {len(old)} before, {len(new)} after"]
        pairs = enumerate(zip(old, new, strict=True))
        return [d for i, (a, b) in pairs for d in differences(a, b, f"{path}[{i}]", rtol, atol)]
    if isinstance(old, float) and isinstance(new, float):
        same = (np.isnan(old) and np.isnan(new)) or abs(old - new) <= atol + rtol * abs(old)
        return [] if same else [f"{path}: {old!r} before, {new!r} after"]
    return [] if old == new else [f"{path}: {old!r} before, {new!r} after"]
