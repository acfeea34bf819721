"""Streamlit ``AppTest`` plumbing for the concurrency benchmark: many sessions on one
mock runtime, the app serving a chosen model folder, and reading a shown heatmap."""

from __future__ import annotations

import base64
import functools
import json
import os
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

from bench.common import CHART
from deploy.launch import MODELS_DIR_VARIABLE


def scan_components_once() -> None:
    """Make Streamlit scan the installed packages for components once per process.

    Each ``AppTest``'s first run builds its own component manager, which reads every
    installed distribution's metadata (``streamlit.components.v2.manifest_scanner``):
    0.34 s of CPU per AppTest on the 2-core machine (measured: 9.2 s of a quick latency
    section's 18 s), where a real server scans once, at its start. The installed packages
    do not change while a process runs, so the first scan's result is kept for the next
    AppTests. Idempotent; the app's server does not call it.
    """
    from streamlit.components.v2 import manifest_scanner as scanner

    if getattr(scanner.scan_component_manifests, "scanned_once", False):
        return
    first = functools.cache(scanner.scan_component_manifests)

    def once(max_workers: int | None = None) -> list:
        return list(first())  # a new list: the caller may change it

    once.scanned_once = True
    scanner.scan_component_manifests = once


def _array(z) -> np.ndarray:
    """A plotly JSON array (plain list, or typed ``{"dtype", "bdata", "shape"}``) as float."""
    if isinstance(z, dict) and "bdata" in z:
        arr = np.frombuffer(base64.b64decode(z["bdata"]), dtype=np.dtype(z["dtype"]))
        shape = z.get("shape")
        if isinstance(shape, str):
            shape = [int(s) for s in shape.split(",")]
        return arr.reshape(shape).astype(float) if shape else arr.astype(float)
    return np.array(z, dtype=float)


def shown_attention(at: AppTest) -> np.ndarray:
    """The big heatmap of the attention view: (T, T) weights of the selected head."""
    chart = next(el for el in at.get("bidi_component") if el.proto.component_name == CHART)
    spec = json.loads(chart.proto.bytes)["figure"]  # ui.chart's payload
    return _array(spec["data"][0]["z"])


@contextmanager
def serving(folder: Path):
    """The app's shipped models come from ``folder`` (through the app's own setting,
    ``$ATTNVIZ_MODELS_DIR``), with Streamlit's caches cleared on the way in and out."""
    import streamlit as st

    previous = os.environ.get(MODELS_DIR_VARIABLE)
    os.environ[MODELS_DIR_VARIABLE] = str(folder)
    st.cache_resource.clear()
    st.cache_data.clear()
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(MODELS_DIR_VARIABLE)
        else:
            os.environ[MODELS_DIR_VARIABLE] = previous
        st.cache_resource.clear()
        st.cache_data.clear()
