"""Streamlit ``AppTest`` plumbing for the concurrency benchmark: many sessions on one
mock runtime, the app serving a chosen model folder, and reading a shown heatmap."""

from __future__ import annotations

import base64
import json
import os
from contextlib import contextmanager
from pathlib import Path
from unittest.mock import MagicMock

import numpy as np
from streamlit.testing.v1 import AppTest

from bench.common import CHART
from deploy.launch import MODELS_DIR_VARIABLE


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
def shared_runtime():
    """One mock Streamlit Runtime for all AppTest sessions, as on one server.

    ``AppTest`` swaps a fresh mock into the global ``Runtime._instance`` for each
    run and sets it back to None when the run ends, so two sessions running at
    once break each other ("Runtime hasn't been created!"). Inside this context
    the real global holds one shared mock for the whole benchmark, and
    ``AppTest``'s per-run swaps land on a throwaway subclass instead.
    """
    import streamlit.testing.v1.app_test as app_test_module
    from streamlit.components.v2.component_manager import BidiComponentManager
    from streamlit.runtime import Runtime
    from streamlit.runtime.caching.storage.dummy_cache_storage import (
        MemoryCacheStorageManager,
    )
    from streamlit.runtime.dataframe_source_manager import DataframeSourceManager
    from streamlit.runtime.media_file_manager import MediaFileManager
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
    from streamlit.testing.v1.util import patch_config_options

    shared = MagicMock(spec=Runtime)
    shared.media_file_mgr = MediaFileManager(MemoryMediaFileStorage("/mock/media"))
    shared.dataframe_source_mgr = DataframeSourceManager()
    shared.cache_storage_manager = MemoryCacheStorageManager()
    components = BidiComponentManager()
    components.discover_and_register_components(start_file_watching=False)
    shared.bidi_component_registry = components
    previous = Runtime._instance
    Runtime._instance = shared
    app_test_module.Runtime = type("PerRunRuntime", (Runtime,), {})
    try:
        with patch_config_options({"global.appTest": True}):
            yield
    finally:
        app_test_module.Runtime = Runtime
        Runtime._instance = previous


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
