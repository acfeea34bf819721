"""The multi-head attention reshape pipeline, with real numbers.

``reshape_stages`` lists every tensor shape from the input (B, T, C) to the output
projection; ``shape_flow_figure`` draws the list as a plotly table.
"""

from __future__ import annotations

import plotly.graph_objects as go

from viz import style


def _stage(step: str, op: str, shape: tuple[int, ...], note: str) -> dict:
    return {"step": step, "op": op, "shape": tuple(int(s) for s in shape), "note": note}


def reshape_stages(
    B: int, T: int, C: int, H: int, D: int | None = None, attention: str = "softmax"
) -> list[dict]:
    """Shapes through one multi-head attention layer.

    Args:
        B: batch size, T: tokens, C: d_model, H: heads, D: d_head (default C // H).
        attention: ``"softmax"`` (T x T score matrix) or ``"linear"`` (feature map
            phi(x) = elu(x) + 1 and a (D, D) state per head instead of T x T).

    Returns:
        Ordered list of dicts ``{"step", "op", "shape", "note"}``; ``shape`` is a tuple
        of ints, e.g. ``(B, H, T, D)`` with real numbers substituted.

    Raises:
        ValueError: for a non-positive size, ``H * D != C`` or an unknown attention kind.
    """
    if D is None:
        D = C // H if H > 0 else 0
    for name, val in (("B", B), ("T", T), ("C", C), ("H", H), ("D", D)):
        if int(val) < 1:
            raise ValueError(f"{name} must be >= 1, got {val}")
    if H * D != C:
        raise ValueError(f"H * D must equal C, got {H} * {D} != {C}")
    if attention not in ("softmax", "linear"):
        raise ValueError(f"unknown attention kind {attention!r}")

    stages = [
        _stage(
            "input",
            "x (token + position embedding)",
            (B, T, C),
            "B sentences, T tokens, C features",
        ),
        _stage("project", "Q, K, V = x W_Q, x W_K, x W_V", (B, T, C), "three Linear(C, C) layers"),
        _stage("split heads", "view(B, T, H, D)", (B, T, H, D), f"C = H x D = {H} x {D}"),
        _stage("heads first", "transpose(1, 2)", (B, H, T, D), "each head sees all T tokens"),
    ]
    if attention == "softmax":
        stages += [
            _stage(
                "scores", "Q Kᵀ / √D", (B, H, T, T), f"one score per (query, key) pair: {T} x {T}"
            ),
            _stage(
                "weights", "mask + softmax(-1)", (B, H, T, T), "future keys -> -inf; rows sum to 1"
            ),
        ]
    else:
        stages += [
            _stage(
                "feature map", "φ(Q), φ(K), φ(x) = elu(x) + 1", (B, H, T, D), "positive features"
            ),
            _stage(
                "state",
                "S_i = Σ_{j≤i} φ(k_j) v_jᵀ",
                (B, H, D, D),
                f"running {D} x {D} summary per head, no {T} x {T} matrix",
            ),
            _stage("normalizer", "z_i = Σ_{j≤i} φ(k_j)", (B, H, D), "divides out the row sum"),
        ]
    mix = "weights · V" if attention == "softmax" else "φ(q_i)ᵀ S_i / (φ(q_i)ᵀ z_i + ε)"
    stages += [
        _stage("mix values", mix, (B, H, T, D), "per-head output (head_out)"),
        _stage("merge heads", "transpose(1, 2).view(B, T, C)", (B, T, C), "concatenate heads"),
        _stage("output", "· W_O", (B, T, C), "Linear(C, C) mixes the heads"),
    ]
    return stages


def format_shape(shape: tuple[int, ...]) -> str:
    """``(1, 8, 4, 16)`` -> ``"(1, 8, 4, 16)"`` (always with parentheses)."""
    return "(" + ", ".join(str(s) for s in shape) + ")"


def shape_flow_figure(stages: list[dict], title: str = "Multi-head reshape") -> go.Figure:
    """Plotly table of the stages: one row per stage, columns step / operation / shape / note.

    Args:
        stages: output of ``reshape_stages``.

    Returns:
        Figure with a single ``go.Table`` trace; the shape column shows real numbers.
    """
    cols = [
        [s["step"] for s in stages],
        [style.escape(s["op"]) for s in stages],
        [format_shape(s["shape"]) for s in stages],
        [style.escape(s["note"]) for s in stages],
    ]
    fig = go.Figure(
        go.Table(
            columnwidth=[1.2, 2.4, 1.4, 3.0],
            header={
                "values": ["<b>step</b>", "<b>operation</b>", "<b>shape</b>", "<b>note</b>"],
                "font": {"size": style.FONT_SIZE},
                "fill_color": "#dbe9f6",
                "align": "left",
                "height": 36,
            },
            cells={
                "values": cols,
                "font": {"size": style.FONT_SIZE},
                "align": "left",
                "height": 34,
            },
        )
    )
    # Rows wrap to two lines in a narrow column; size for that so no row scrolls out of view.
    return style.apply_layout(fig, title=title, height=100 + 46 * (len(stages) + 1))
