"""Shared pieces of the heatmap figures (``viz.attention``, ``viz.mask``,
``viz.tensors``): input checks, escaped labels and one heatmap trace.

Pure functions: arrays and token strings in, plain values and trace dicts out.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from viz import style

HOVER_ATTN = "query: %{y}<br>key: %{x}<br>weight: %{z:.3f}<extra></extra>"


def check_tokens(tokens: Sequence[object], n: int, what: str) -> None:
    """Raises ValueError naming ``what`` unless there is one token per position (n)."""
    if len(tokens) != n:
        raise ValueError(f"{what} has {n} positions but {len(tokens)} tokens were given")


def numeric(values: object) -> np.ndarray:
    """An array of floats; float32 stays float32 (the model's own numbers, half the bytes)."""
    arr = np.asarray(values)
    return arr if arr.dtype.kind == "f" else arr.astype(float)


def square(weights: object, name: str) -> np.ndarray:
    """``weights`` as a (T, T) float array; ValueError naming ``name`` otherwise."""
    arr = numeric(weights)
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
        raise ValueError(f"{name} must have shape (T, T), got {arr.shape}")
    return arr


def axis_labels(names: Sequence[object] | None, n: int, prefix: str) -> list[str]:
    """Escaped labels of n positions: position-prefixed when ``names`` repeat,
    ``prefix+i`` when None.

    Raises:
        ValueError: if ``len(names) != n``.
    """
    if names is None:
        return [f"{prefix}{i}" for i in range(n)]
    if len(names) != n:
        raise ValueError(f"expected {n} labels, got {len(names)}")
    out = [style.escape(x) for x in names]
    return out if len(set(out)) == n else style.token_labels(names)


def heat_trace(z: np.ndarray, x: list[str], y: list[str], **kw: object) -> dict:
    """A heatmap trace; a named ``colorscale`` is expanded as plotly.py would."""
    if isinstance(kw.get("colorscale"), str):
        kw["colorscale"] = style.colorscale(kw["colorscale"])
    return {"type": "heatmap", "z": z, "x": x, "y": y, "hovertemplate": HOVER_ATTN, **kw}
