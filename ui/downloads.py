"""Download buttons for the arrays behind a view (NPY for all, CSV for 2-D slices)."""

from __future__ import annotations

import io

import numpy as np
import streamlit as st


def npy_bytes(array: np.ndarray) -> bytes:
    """``np.save`` into memory (no pickle: plain numeric arrays only)."""
    buf = io.BytesIO()
    np.save(buf, np.asarray(array), allow_pickle=False)
    return buf.getvalue()


def csv_bytes(matrix: np.ndarray, labels: list[str] | None = None) -> bytes:
    """A 2-D array as CSV; the first column holds ``labels`` when given."""
    matrix = np.asarray(matrix)
    lines = []
    if labels is not None:
        lines.append(",".join(["token", *map(str, range(matrix.shape[1]))]))
    for i, row in enumerate(matrix):
        cells = [f"{x:.6g}" for x in row]
        if labels is not None:
            label = labels[i].replace('"', '""')
            if label[:1] in ("=", "+", "-", "@"):  # no spreadsheet formulas from user text
                label = "'" + label
            cells.insert(0, f'"{label}"')
        lines.append(",".join(cells))
    return ("\n".join(lines) + "\n").encode()


def arrays(prefix: str, named: dict[str, np.ndarray], tokens: list[str] | None) -> None:
    """One NPY button per array, and a CSV of its first 2-D slice when it is (L, H, T, T)."""
    with st.expander("Download the numbers"):
        for name, array in named.items():
            st.download_button(
                f"{name} {tuple(array.shape)} as .npy",
                npy_bytes(array),
                file_name=f"{prefix}_{name}.npy",
                mime="application/octet-stream",
                key=f"dl_{prefix}_{name}_npy",
                on_click="ignore",
            )
            if array.ndim == 4 and tokens is not None:
                L, H = array.shape[:2]
                layer = st.number_input("layer", 0, L - 1, 0, key=f"dl_{prefix}_{name}_l")
                head = st.number_input("head", 0, H - 1, 0, key=f"dl_{prefix}_{name}_h")
                st.download_button(
                    f"{name}[layer {layer}, head {head}] as .csv",
                    csv_bytes(array[layer, head], tokens),
                    file_name=f"{prefix}_{name}_L{layer}H{head}.csv",
                    mime="text/csv",
                    key=f"dl_{prefix}_{name}_csv",
                    on_click="ignore",
                )
