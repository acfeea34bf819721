"""The transformer block (pre-LN, GPT-2 layout) as a flow of tensors with real shapes,
and its numbers from the graph (#21).

``block_stages`` lists each tensor of one block, from the residual stream in to the
residual stream out (with one token's ||x|| at each when given);
``viz.shape_flow.shape_flow_figure`` draws the list as boxes and arrows.
``contributions_figure`` draws what attention and the MLP add to every token's residual
stream, ``token_sum_figure`` one token's residual in + attention + MLP = residual out,
dimension by dimension. Input: ``inference.block.BlockNumbers``' arrays.
"""

from __future__ import annotations

import numpy as np

from viz import fit, spec, style

BTC = ("B", "T", "d_model")
BTM = ("B", "T", "d_mlp")


def _stage(step: str, op: str, shape: tuple[int, ...], note: str, dims: tuple) -> dict:
    return {"step": step, "op": op, "shape": tuple(int(s) for s in shape), "dims": dims,
            "note": note}  # fmt: skip


def block_stages(
    B: int,
    T: int,
    C: int,
    d_mlp: int,
    H: int,
    attention: str = "softmax",
    norms: tuple[float, ...] | None = None,
    norm: str = "layernorm",
    activation: str = "gelu",
    gated: bool = False,
    parallel: bool = False,
) -> list[dict]:
    """Shapes through one pre-LN block: x + attn(ln_1(x)), then x + mlp(ln_2(x)).

    Args:
        B: batch, T: tokens, C: d_model, d_mlp: the MLP's hidden width, H: heads.
        attention: ``"softmax"`` or ``"linear"`` (named in the attention arrow).
        norms: one token's ||x|| at each of the 8 stages (``contract.BLOCK_HOOKS``
            order), written in its box as ``"value"``; None: shapes only.
        norm, activation, gated, parallel: the model's ``cfg.norm``, ``cfg.activation``,
            ``cfg.gated_mlp`` and ``cfg.parallel_residual`` (Llama's RMSNorm and SwiGLU,
            GPT-NeoX's parallel block), named in the boxes.

    Returns:
        The stages of ``viz.shapes.reshape_stages``' form: ``{"step", "op", "shape",
        "dims", "note"}`` (and ``"value"`` with ``norms``).

    Raises:
        ValueError: for a size below 1, C not divisible by H, or not 8 norms.
    """
    for name, val in (("B", B), ("T", T), ("C", C), ("d_mlp", d_mlp), ("H", H)):
        if int(val) < 1:
            raise ValueError(f"{name} must be >= 1, got {val}")
    if C % H:
        raise ValueError(f"d_model {C} is not divisible by {H} heads")
    D = C // H
    rms = norm == "rmsnorm"
    norm_name = "RMSNorm" if rms else "LayerNorm"
    how = (
        "each token: divided by its RMS, then γ"
        if rms
        else "each token: mean 0, variance 1, then γ, β"
    )
    act = {"gelu": "GELU", "gelu_new": "GELU (tanh)", "silu": "SiLU"}[activation]
    hidden = (f"{act}(Linear({C}, {d_mlp})) ⊙ Linear({C}, {d_mlp})" if gated
              else f"Linear({C}, {d_mlp}) + {act}")  # fmt: skip
    stages = [
        _stage("residual stream in", "", (B, T, C), "", BTC),
        _stage("ln_1(x)", norm_name, (B, T, C), how, BTC),
        _stage(
            "attention output",
            f"{attention} attention, {H} heads × d_head {D}, then W_O",
            (B, T, C),
            "mixes information between tokens",
            BTC,
        ),  # fmt: skip
        _stage(
            "x + attention", "add (residual)", (B, T, C), "the block adds, never replaces", BTC
        ),  # fmt: skip
        _stage(
            "ln_2(x)",
            norm_name,
            (B, T, C),
            "of the block's input (parallel block)" if parallel else "normalize again",
            BTC,
        ),  # fmt: skip
        _stage(
            "MLP hidden",
            hidden,
            (B, T, d_mlp),
            "each token on its own",
            BTM,
        ),  # fmt: skip
        _stage("MLP output", f"Linear({d_mlp}, {C})", (B, T, C), "back to d_model", BTC),
        _stage(
            "residual stream out",
            "add (residual)",
            (B, T, C),
            "x + MLP: the next block's input",
            BTC,
        ),  # fmt: skip
    ]
    if norms is None:
        return stages
    if len(norms) != len(stages):
        raise ValueError(f"{len(norms)} norms for {len(stages)} stages")
    return [{**s, "value": f"‖x‖ = {v:.2f}"} for s, v in zip(stages, norms, strict=True)]


PARTS = (  # (hook, legend name, colour): what the block adds to the residual stream
    ("attn.out", "attention adds ‖attn.out‖", "#1f77b4"),
    ("mlp.out", "MLP adds ‖mlp.out‖", "#ff7f0e"),
)
STREAM = (("resid_pre", "residual in ‖resid_pre‖", "#6b7280"),
          ("resid_post", "residual out ‖resid_post‖", "#111827"))  # fmt: skip
CONTRIBUTIONS_PX = 430  # the figure's height: above the fold at 1280×720 when presenting


def _outline(t: int) -> dict:
    """A shaded column behind category ``t`` of the x axis (the chosen token)."""
    return {"type": "rect", "xref": "x", "yref": "paper", "x0": t - 0.5, "x1": t + 0.5,
            "y0": 0, "y1": 1, "fillcolor": "#fde68a", "opacity": 0.6,
            "line": {"width": 0}, "layer": "below"}  # fmt: skip


def contributions_figure(
    norms: dict[str, np.ndarray], tokens: list[str], token: int, layer: int
) -> spec.Spec:
    """Per token: the norms of what attention and the MLP add to its residual stream
    (bars), and of the residual stream in and out (lines); the chosen token shaded.

    Args:
        norms: hook -> (T,) ||x_t|| (``BlockNumbers.norms``).
        tokens: the T tokens as drawn; token: the chosen position; layer: the block.

    Raises:
        ValueError: if the norms are not T long or ``token`` is not a position.
    """
    labels = style.token_labels(tokens)
    T = len(labels)
    if any(len(norms[h]) != T for h, _, _ in (*PARTS, *STREAM)) or not 0 <= token < T:
        raise ValueError(f"norms of length T = {T} and a token in 0..{T - 1} needed")
    data = []
    for hook, name, colour in PARTS:
        data.append({"type": "bar", "x": labels, "y": np.asarray(norms[hook], np.float32),
                     "name": name, "marker": {"color": colour}, "customdata": list(range(T)),
                     "hovertemplate": f"%{{x}}<br>{name}: %{{y:.2f}}<extra></extra>"})  # fmt: skip
    for hook, name, colour in STREAM:
        data.append({"type": "scatter", "mode": "lines+markers", "x": labels, "name": name,
                     "y": np.asarray(norms[hook], np.float32), "line": {"color": colour},
                     "customdata": list(range(T)),
                     "hovertemplate": f"%{{x}}<br>{name}: %{{y:.2f}}<extra></extra>"})  # fmt: skip
    xaxis = {"type": "category", "automargin": True, "tickangle": -45,
             **fit.every_label(labels, fit.FULL_1280_PX, x=True)}  # fmt: skip
    layout = {
        "barmode": "group",
        "xaxis": xaxis,
        "yaxis": {"title": {"text": "L2 norm"}, "rangemode": "tozero", "automargin": True},
        "legend": {"orientation": "h", "y": 1.0, "yanchor": "bottom", "x": 0},
        "shapes": [_outline(token)],
        "margin": {"t": 110, "b": 40, "l": 60, "r": 20},
        "clickmode": "event+select",
    }
    title = f"Block {layer}: what attention and the MLP add to each token"
    return spec.figure(data, layout, title=title, height=CONTRIBUTIONS_PX)


SUM_ROWS = (("resid_pre", "residual in"), ("attn.out", "+ attention"),
            ("mlp.out", "+ MLP"), ("resid_post", "= residual out"))  # fmt: skip


def token_sum_figure(vectors: dict[str, np.ndarray], token: str, layer: int) -> spec.Spec:
    """One token's residual stream in, what attention and the MLP add, and the residual
    stream out, each a row of d_model numbers (diverging colours, one scale):
    row 4 = row 1 + row 2 + row 3, dimension by dimension.

    Args:
        vectors: hook -> (C,) (``BlockNumbers.token(t)``); token: its label as drawn.

    Raises:
        ValueError: if the four vectors differ in length.
    """
    z = [np.asarray(vectors[h], np.float32) for h, _ in SUM_ROWS]  # 4 x (C,)
    if len({v.shape for v in z}) != 1 or z[0].ndim != 1:
        raise ValueError("residual in, attention, MLP and residual out must be (C,) each")
    rows = [f"{name} ‖{np.linalg.norm(v):.1f}‖" for (_, name), v in zip(SUM_ROWS, z, strict=True)]
    lo, hi = style.symmetric_range(np.stack(z))
    heat = {"type": "heatmap", "z": np.stack(z), "y": rows, "zmin": lo, "zmax": hi,
            "colorscale": style.colorscale(style.DIVERGING), "colorbar": {"thickness": 14},
            "hovertemplate": "%{y}<br>dimension %{x}: %{z:.3f}<extra></extra>"}  # fmt: skip
    layout = {
        "xaxis": {"title": {"text": f"dimension of d_model = {len(z[0])}"}},
        "yaxis": {"autorange": "reversed", "type": "category", "automargin": True},
        "margin": {"t": 70, "b": 60, "l": 40, "r": 20},
    }
    title = f"Block {layer}, token “{style.escape(token)}”: in + attention + MLP = out"
    return spec.figure([heat], layout, title=title, height=330)
