"""Download buttons for what a view shows: its arrays as one ``.npz`` with a manifest, NPY
for every array, CSV for 2-D slices; the whole view as one offline HTML file, and a
Vega-Lite chart as SVG or PNG (``ui.view_files``).

Files are made only when a button is clicked (``st.download_button`` takes a
callable), so a rerun does no encoding work.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import streamlit as st

from ui import view_files as files
from ui.figures import Drawn

MANIFEST = "manifest.json"  # inside the .npz: np.load(f)["manifest.json"] is its bytes
_PER_HEAD = ("layer", "head", "token", "d_head")
# What each axis of an array is, by the array's name (the manifest's "axes").
AXES = {
    "attn": ("layer", "head", "query", "key"),
    "scores": ("layer", "head", "query", "key"),
    "masked_scores": ("layer", "head", "query", "key"),
    **dict.fromkeys(("q", "k", "v", "head_out", "normalizer", "y"), _PER_HEAD),
    "state": ("layer", "head", "token", "d_head (key)", "d_head (value)"),
    "beta": ("layer", "head", "token", "1"),
    "pos_enc": ("position", "d_model"),
    "logits": ("position", "vocab"),
    "probs": ("position", "vocab"),
}


def npy_bytes(array: np.ndarray) -> bytes:
    """``np.save`` into memory (no pickle: plain numeric arrays only)."""
    buf = io.BytesIO()
    np.save(buf, np.asarray(array), allow_pickle=False)
    return buf.getvalue()


def npz_bytes(named: Mapping[str, np.ndarray], manifest: dict) -> bytes:
    """The arrays as one ``.npz`` (NPY members, no pickle) with ``manifest`` as
    ``manifest.json`` beside them in the same zip; its ``arrays`` entry is filled here:
    name -> ``{"shape", "dtype", "axes"}`` (axes from :data:`AXES`, or the manifest's own).
    """
    given = manifest.get("axes", {})
    listed = {
        name: {
            "shape": list(np.shape(array)),
            "dtype": str(np.asarray(array).dtype),
            "axes": list(given.get(name, AXES.get(name, ()))) or None,
        }
        for name, array in named.items()
    }
    body = {k: v for k, v in manifest.items() if k != "axes"} | {"arrays": listed}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        for name, array in named.items():
            zf.writestr(f"{name}.npy", npy_bytes(array))
        zf.writestr(MANIFEST, json.dumps(body, ensure_ascii=False, indent=1))
    return buf.getvalue()


def about(name: str, result, layer: int, head: int, view: str, **extra) -> dict:
    """A manifest's head: the model (its key: ``softmax``, ``upload``, a served name), the
    sentence as tokenized (text, tokens, token ids), the layer and head shown, the view,
    and ``extra`` (e.g. the ablated heads)."""
    return {
        "model": name,
        "sentence": result.text,
        "tokens": list(result.tokens),
        "token_ids": [int(i) for i in result.ids],
        "layer": int(layer),
        "head": int(head),
        "view": view,
        **extra,
    }


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
    manifest: dict | None = None,
) -> None:
    """An expander with every array in one ``.npz`` with a manifest, one NPY button per
    array and a CSV of its 2-D slice.

    Args:
        prefix: file-name prefix and widget-key prefix.
        named: array name -> array, e.g. ``attn`` (L, H, T, T), ``q`` (L, H, T, d_head),
            ``pos_enc`` (T, C), ``state`` (L, H, T, d_head, d_head) (NPY only).
        tokens: row labels (T strings) or None.
        layer, head: the slice the CSV holds for (L, H, ...) arrays (the selected head).
        manifest: what the arrays are of (:func:`about`; ``axes``: name -> axis names for
            arrays :data:`AXES` does not know); default: the layer and head alone.
    """
    if not named:
        return
    manifest = {"layer": layer, "head": head} if manifest is None else manifest
    with st.expander("Download the numbers"):
        st.download_button(
            f"{', '.join(named)} in one .npz (with {MANIFEST}: names, shapes, and the model, "
            "sentence, layer and head they are of)",
            lambda: npz_bytes(named, manifest),
            file_name=f"{prefix}.npz",
            mime="application/zip",
            key=f"dl_{prefix}_npz",
            on_click="ignore",
        )
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


def view_files(drawn: Sequence[Drawn], title: str, lines: Sequence[str], stem: str) -> None:
    """Under a view: the view as one HTML file (its figures interactive, plotly.js
    inlined, offline; ``ui.view_files.view_html``) and each Vega-Lite chart as SVG and
    PNG (Streamlit's own chart has no export menu). Nothing when the view drew nothing.

    Args:
        drawn: the view's figures (``ui.figures.collecting``).
        title, lines: the file's heading and what it shows (model, sentence, ...).
        stem: the file names' stem (and the buttons' key prefix).
    """
    if not drawn:
        return
    st.download_button(
        "This view as one HTML file (interactive, offline)",
        lambda: files.view_html(drawn, title, lines),
        file_name=f"{stem}.html",
        mime="text/html",
        key=f"dl_{stem}_html",
        icon=":material/download:",
        on_click="ignore",
    )
    vega = [d.vega for d in drawn if d.vega is not None]
    for n, spec in enumerate(vega):
        heading = spec.get("title")
        heading = heading.get("text") if isinstance(heading, dict) else heading
        label = str(heading) if isinstance(heading, str) and heading else f"chart {n + 1}"
        cols = st.columns(2)
        for col, fmt in zip(cols, ("svg", "png"), strict=True):
            col.download_button(
                f"{label} as .{fmt}",
                lambda spec=spec, fmt=fmt: files.vega_image(spec, fmt),
                file_name=f"{stem}_chart{n + 1}.{fmt}",
                mime="image/svg+xml" if fmt == "svg" else "image/png",
                key=f"dl_{stem}_vega{n}_{fmt}",
                on_click="ignore",
            )
