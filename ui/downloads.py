"""Download buttons for the arrays behind a view: NPY for every array, CSV for 2-D slices.

Files are encoded only when a button is clicked (``st.download_button`` takes a
callable), so a rerun does no encoding work.
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import streamlit as st


def npy_bytes(array: np.ndarray) -> bytes:
    """``np.save`` into memory (no pickle: plain numeric arrays only)."""
    buf = io.BytesIO()
    np.save(buf, np.asarray(array), allow_pickle=False)
    return buf.getvalue()


def _safe_label(label: str) -> str:
    """No spreadsheet formulas from user text: a leading = + - @ gets a quote."""
    return "'" + label if label[:1] in ("=", "+", "-", "@") else label


def csv_bytes(
    matrix: np.ndarray, rows: list[str] | None = None, columns: list[str] | None = None
) -> bytes:
    """A 2-D array (R, K) as CSV via pandas; ``rows`` / ``columns`` label the axes.

    Raises:
        ValueError: if ``matrix`` is not 2-D or a label list has the wrong length.
    """
    matrix = np.asarray(matrix)
    if matrix.ndim != 2:
        raise ValueError(f"CSV needs a 2-D array, got shape {matrix.shape}")
    index = [_safe_label(str(r)) for r in rows] if rows is not None else None
    cols = [_safe_label(str(c)) for c in columns] if columns is not None else None
    frame = pd.DataFrame(matrix, index=index, columns=cols)
    return frame.to_csv(index=rows is not None, float_format="%.6g").encode()


def _csv_slice(name: str, array: np.ndarray, layer: int, head: int, tokens: list[str] | None):
    """(label, file suffix, bytes factory) for the CSV of ``array``, or None if not 2-D.

    ``(L, H, T, T)`` and ``(L, H, T, d)`` arrays give the selected head's slice; a
    ``(T, C)`` array is written whole. Rows are tokens, columns keys or dimensions.
    """
    if array.ndim == 4:
        part, label = array[layer, head], f"{name}[layer {layer}, head {head}]"
        suffix = f"_L{layer}H{head}"
    elif array.ndim == 2:
        part, label, suffix = array, name, ""
    else:
        return None
    rows = None
    if tokens is not None and len(tokens) == part.shape[0]:
        rows = [f"{i}:{t}" for i, t in enumerate(tokens)]  # unique even when tokens repeat
    square = part.shape[0] == part.shape[1] and rows is not None
    columns = rows if square else [f"dim {j}" for j in range(part.shape[1])]
    return label, suffix, lambda: csv_bytes(part, rows, columns)


def arrays(
    prefix: str,
    named: dict[str, np.ndarray],
    tokens: list[str] | None,
    layer: int = 0,
    head: int = 0,
) -> None:
    """An expander with one NPY button per array and a CSV of its 2-D slice.

    Args:
        prefix: file-name prefix and widget-key prefix.
        named: array name -> array, e.g. ``attn`` (L, H, T, T), ``q`` (L, H, T, d_head),
            ``pos_enc`` (T, C), ``state`` (L, H, T, d_head, d_head) (NPY only).
        tokens: row labels (T strings) or None.
        layer, head: the slice the CSV holds for (L, H, ...) arrays (the selected head).
    """
    with st.expander("Download the numbers"):
        for name, array in named.items():
            st.download_button(
                f"{name} {tuple(array.shape)} as .npy",
                lambda array=array: npy_bytes(array),
                file_name=f"{prefix}_{name}.npy",
                mime="application/octet-stream",
                key=f"dl_{prefix}_{name}_npy",
                on_click="ignore",
            )
            csv = _csv_slice(name, array, layer, head, tokens)
            if csv is not None:
                label, suffix, data = csv
                st.download_button(
                    f"{label} as .csv",
                    data,
                    file_name=f"{prefix}_{name}{suffix}.csv",
                    mime="text/csv",
                    key=f"dl_{prefix}_{name}_csv",
                    on_click="ignore",
                )
