"""Plotly figures for the lesson pages (arrays in, ``go.Figure`` out, or a plain spec
where ``viz.attention`` builds it; no Streamlit).

Heatmaps follow ``viz.attention`` (rows = queries, first token on top, labels
``"3·the"`` escaped by ``viz.style.token_labels``); every figure goes through
``viz.style.apply_layout`` for projector-sized fonts.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from viz import spec, style
from viz.attention import attention_heatmap

_HOVER = "query: %{y}<br>key: %{x}<br>value: %{z:.3g}<extra></extra>"


def _beta_text(beta: float) -> str:
    return "∞" if np.isinf(beta) else f"{beta:g}"


def beta_attention(weights: object, tokens: Sequence[object], beta: float, title: str = ""):
    """One head's softmax_beta weights (T, T) as a 0..1 heatmap titled with beta."""
    head = f"{title}: " if title else ""
    return attention_heatmap(
        weights, tokens, title=f"{head}softmax(β · QKᵀ/√d_head), β = {_beta_text(beta)}"
    )


def entropy_bars(entropy: object, tokens: Sequence[object], beta: float) -> go.Figure:
    """Entropy per query (T,) in bits, against its maximum log2(i + 1) (uniform attention)."""
    h = np.asarray(entropy, dtype=float).reshape(-1)
    labels = style.token_labels(tokens)
    if len(labels) != h.size:
        raise ValueError(f"{h.size} entropies but {len(labels)} tokens")
    fig = go.Figure(go.Bar(x=labels, y=h, name="entropy", marker_color=style.BAR_COLOR))
    fig.add_trace(
        go.Scatter(
            x=labels,
            y=np.log2(np.arange(1, h.size + 1)),
            name="maximum log₂(i+1)",
            mode="lines+markers",
            line={"color": style.HIGHLIGHT_COLOR, "dash": "dash"},
        )
    )
    fig.update_xaxes(type="category", tickangle=-45, title_text="query")
    fig.update_yaxes(title_text="entropy (bits)", rangemode="tozero")
    fig.update_layout(legend={"orientation": "h", "x": 0, "y": 1.0, "yanchor": "bottom"})
    return style.apply_layout(fig, title=f"Row entropy, β = {_beta_text(beta)}")


def side_by_side(
    matrices: Sequence[object],
    titles: Sequence[str],
    tokens: Sequence[object],
    diverging: bool = True,
    height: int = 520,
) -> go.Figure:
    """Two or three (T, T) heatmaps in a row, each with its own colour range and bar.

    Diverging panels are centred at 0 (signed scores); sequential ones run 0..max.

    Raises:
        ValueError: if a matrix is not (T, T) with T = len(tokens).
    """
    labels = style.token_labels(tokens)
    n = len(matrices)
    fig = make_subplots(rows=1, cols=n, subplot_titles=list(titles), horizontal_spacing=0.08)
    for col, m in enumerate(matrices, start=1):
        z = np.asarray(m, dtype=float)
        if z.shape != (len(labels), len(labels)):
            raise ValueError(f"panel {col} has shape {z.shape}, expected {(len(labels),) * 2}")
        if diverging:
            lo, hi = style.symmetric_range(z)
            colors = {"zmin": lo, "zmax": hi, "zmid": 0.0, "colorscale": style.DIVERGING}
        else:
            hi = float(np.nanmax(z)) if np.isfinite(z).any() else 1.0
            colors = {"zmin": 0.0, "zmax": hi or 1.0, "colorscale": style.SEQUENTIAL}
        domain = fig.get_subplot(1, col).xaxis.domain
        bar = {  # horizontal, under its own panel (as in viz.mask.causal_mask_panels)
            "orientation": "h",
            "x": (domain[0] + domain[1]) / 2,
            "y": -0.32,
            "yanchor": "top",
            "len": domain[1] - domain[0],
            "thickness": 14,
            "exponentformat": "power",  # 5×10⁻⁷, not SI's "500n" (a difference, not a unit)
        }
        fig.add_trace(
            go.Heatmap(z=z, x=labels, y=labels, hovertemplate=_HOVER, colorbar=bar, **colors),
            row=1,
            col=col,
        )
        # the panels share their rows: labels on the first only (beside the others they
        # ran over the neighbouring panel at 1280 px)
        fig.update_yaxes(autorange="reversed", type="category", showticklabels=col == 1,
                         row=1, col=col)  # fmt: skip
        fig.update_xaxes(type="category", tickangle=-45, title_text="key", row=1, col=col)
    fig.update_yaxes(title_text="query", row=1, col=1)
    style.apply_layout(fig, height=height)
    fig.update_layout(margin_b=150)  # room for the colour bars
    fig.update_annotations(font_size=style.SUBPLOT_TITLE_SIZE)
    fig.update_xaxes(tickfont={"size": style.SMALL_TICK_SIZE})
    fig.update_yaxes(tickfont={"size": style.SMALL_TICK_SIZE})
    return spec.square_figure(fig)


def variance_by_dim(
    dims: object, unscaled: object, scaled: object, measured: dict | None = None
) -> go.Figure:
    """Log-log lines: Var(q·k) grows like d, Var(q·k/√d) stays at 1 (dashed references),
    for random unit-Gaussian q, k (synthetic, not the model).

    Args:
        dims, unscaled, scaled: (n,) the random experiment.
        measured: optional ``{"d", "unscaled", "scaled"}`` from
            ``lessons.model_score_variance``: one head's own variances, drawn
            as two labelled dots at d = d_head.
    """
    d = np.asarray(dims, dtype=float)
    fig = go.Figure()
    line = "lines+markers"
    fig.add_trace(go.Scatter(x=d, y=np.asarray(unscaled, float), name="q·k (random)", mode=line))
    fig.add_trace(go.Scatter(x=d, y=np.asarray(scaled, float), name="q·k / √d (random)", mode=line))
    ref = {"mode": "lines", "line": {"dash": "dot", "color": "#888888"}, "hoverinfo": "skip"}
    fig.add_trace(go.Scatter(x=d, y=d, name="d", **ref))
    fig.add_trace(go.Scatter(x=d, y=np.ones_like(d), name="1", **ref))
    title = "Score variance for random unit-Gaussian q, k (not the model)"
    if measured is not None:
        for key, name, symbol in (("unscaled", "q·k", "diamond"), ("scaled", "q·k / √d", "star")):
            fig.add_trace(
                go.Scatter(
                    x=[measured["d"]],
                    y=[measured[key]],
                    name=f"this head: {name} (model)",
                    mode="markers",
                    marker={"size": 16, "symbol": symbol, "color": style.HIGHLIGHT_COLOR},
                )
            )
        title = "Score variance: random unit-Gaussian q, k (lines) and this head (dots)"
    fig.update_xaxes(type="log", title_text="dimension d")
    fig.update_yaxes(type="log", title_text="variance of the score")
    return style.apply_layout(fig, title=title)


def flops_by_length(lengths: object, d: int, current_T: int | None = None) -> go.Figure:
    """FLOPs of (φ(Q)φ(K)ᵀ)V ~ T²d and φ(Q)(φ(K)ᵀV) ~ Td² against T (log-log), d = d_v."""
    T = np.asarray(lengths, dtype=float)
    quad, lin = 4 * T * T * d, 4 * T * d * d  # (n,), (n,)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=T, y=quad, name="(φ(Q)φ(K)ᵀ)V: 4T²d", mode="lines"))
    fig.add_trace(go.Scatter(x=T, y=lin, name="φ(Q)(φ(K)ᵀV): 4Td²", mode="lines"))
    span = [float(min(quad.min(), lin.min())), float(max(quad.max(), lin.max()))]
    marks = [(d, f"T = d = {d}", "#888888")]
    if current_T is not None:
        marks.append((current_T, f"your sentence, T = {current_T}", style.HIGHLIGHT_COLOR))
    for x, name, color in marks:  # vertical lines as traces: data coordinates on log axes
        line = {"dash": "dot", "color": color}
        fig.add_trace(go.Scatter(x=[x, x], y=span, name=name, mode="lines", line=line))
    fig.update_xaxes(type="log", title_text="sequence length T")
    fig.update_yaxes(type="log", title_text="FLOPs per head")
    return style.apply_layout(fig, title=f"Cost of the two orders, d = {d}")


def singular_values_bar(sv: object, d_head: int, title: str = "") -> go.Figure:
    """Singular values (log y) with a line after index d_head: the rank can be at most d_head."""
    s = np.asarray(sv, dtype=float).reshape(-1)
    floor = max(float(s.max()) * 1e-18, 1e-300) if s.size else 1.0
    colors = [style.BAR_COLOR if i < d_head else "#bbbbbb" for i in range(s.size)]
    fig = go.Figure(
        go.Bar(
            x=np.arange(s.size),
            y=np.maximum(s, floor),
            marker_color=colors,
            hovertemplate="σ%{x}: %{y:.3g}<extra></extra>",
        )
    )
    fig.add_vline(x=d_head - 0.5, line_dash="dash", annotation_text=f"d_head = {d_head}")
    fig.update_xaxes(title_text="index")
    # exponentformat "power": every tick 10^k (plotly's default mixes SI prefixes, µ n p f,
    # with powers of ten below 1e-15)
    fig.update_yaxes(type="log", title_text="singular value", exponentformat="power")
    return style.apply_layout(fig, title=title or "Singular values")


def parameter_bars(counts: dict) -> go.Figure:
    """Horizontal bars on a linear axis (lengths in proportion to the counts, so shares
    look as they are): one head's Q, K, V, O, the head, all heads, the model; each bar
    labelled with its count and its share of the model."""
    rows = [
        ("Q of one head", counts["q"]),
        ("K of one head", counts["k"]),
        ("V of one head", counts["v"]),
        ("O of one head", counts["o"]),
        ("one head (Q+K+V+O)", counts["per_head"]),
        ("all heads", counts["all_heads"]),
        ("whole model", counts["model"]),
    ]
    names, values = zip(*rows, strict=True)
    fig = go.Figure(
        go.Bar(
            x=values,
            y=names,
            orientation="h",
            marker_color=[style.BAR_COLOR] * 4 + [style.HIGHLIGHT_COLOR, "#888888", "#444444"],
            text=[f"{v:,} ({v / counts['model']:.1%})" for v in values],
            textposition="outside",
            cliponaxis=False,
            hovertemplate="%{y}: %{x:,}<extra></extra>",
        )
    )
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_xaxes(type="linear", title_text="parameters", range=[0, max(values) * 1.3])
    return style.apply_layout(fig, title="Parameters per head against the model", height=460)
