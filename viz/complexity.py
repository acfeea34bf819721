"""Figures for the complexity lesson and the benchmark report (pure builders, no Streamlit).

Every builder takes the plain dicts that ``bench`` writes to ``results.json``,
so the live lesson page and the saved benchmark plots are the same figures.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from viz import style

COLORS = {
    "softmax": "#d62728",
    "linear": "#1f77b4",
    "linear_recurrent": "#1f77b4",
    "softmax_recompute": "#d62728",
    "softmax_kv_cache": "#ff7f0e",
}
LABELS = {
    "softmax": "softmax (fast graph)",
    "linear": "linear (fast graph)",
    "linear_recurrent": "linear: recurrent step",
    "softmax_recompute": "softmax: recompute the prefix",
    "softmax_kv_cache": "softmax: key/value cache",
}


def loglog_fit(x, y) -> tuple[float, float]:
    """``(slope, intercept)`` of log(y) = slope * log(x) + intercept (natural logs)."""
    slope, intercept = np.polyfit(np.log(np.asarray(x, float)), np.log(np.asarray(y, float)), 1)
    return float(slope), float(intercept)


MAX_TICKS = 7  # tick labels per axis: ~70 px apart on a half-width chart


def tick_text(value: float) -> str:
    """A tick label with one SI prefix at most: ``0.5``, ``20``, ``1000``, ``20k``, ``5M``."""
    for scale, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= max(scale, 1e4):
            return f"{value / scale:g}{prefix}"
    return f"{value:g}"


def log_ticks(values) -> list[float]:
    """Tick values for a log axis over ``values``: 1-2-5 steps per decade, or 1-3, or
    whole decades, or every second decade, whichever first gives at most ``MAX_TICKS`` ticks
    (at least the two around the data)."""
    v = np.asarray([x for x in values if x and x > 0], float)
    if v.size == 0:
        return []
    lo, hi = np.floor(np.log10(v.min())), np.ceil(np.log10(v.max()))
    decades = 10.0 ** np.arange(lo, hi + 1)
    for mantissas, step in (((1, 2, 5), 1), ((1, 3), 1), ((1,), 1), ((1,), 2)):
        ticks = [m * d for d in decades[::step] for m in mantissas]
        inside = [t for t in ticks if v.min() <= t <= v.max()]
        below = [t for t in ticks if t < v.min()][-1:]
        above = [t for t in ticks if t > v.max()][:1]
        ticks = below + inside + above
        if len(ticks) <= MAX_TICKS:
            return ticks
    return ticks


def _axis(ticks: list[float], title: str) -> dict:
    """A log axis labelled at ``ticks`` only, each written out at full size (plotly's own
    log ticks add small 2…9 labels between decades, ~6 px on a projector, that overlap)."""
    return {
        "type": "log",
        "title": {"text": title, "font": {"size": style.FONT_SIZE}},
        "tickmode": "array",
        "tickvals": ticks,
        "ticktext": [tick_text(t) for t in ticks],
        "tickfont": {"size": style.TICK_SIZE},
        "showgrid": True,
        "gridcolor": "#d1d5db",
    }


def _loglog(fig: go.Figure, x_title: str, y_title: str, title: str) -> go.Figure:
    """Log-log axes labelled at the lengths measured when they double (x; every k-th
    when there are more than ``MAX_TICKS``; else at :func:`log_ticks`) and at
    :func:`log_ticks` (y, its range the outer ticks)."""
    xs = sorted({float(x) for t in fig.data for x in (t.x if t.x is not None else ())})
    ys = [y for t in fig.data for y in (t.y if t.y is not None else ())]
    doublings = all(b >= 1.5 * a for a, b in zip(xs, xs[1:], strict=False))
    x_ticks = xs[:: max(1, -(-len(xs) // MAX_TICKS))] if doublings else log_ticks(xs)
    fig.update_xaxes(_axis(x_ticks, x_title))  # lengths 128 and 135 side by side overlapped
    y_ticks = log_ticks(ys)
    y_range = [float(np.log10(y_ticks[0])), float(np.log10(y_ticks[-1]))] if y_ticks else None
    fig.update_yaxes(_axis(y_ticks, y_title) | ({"range": y_range} if y_range else {}))
    fig.update_layout(legend={"orientation": "h", "y": -0.3, "font": {"size": style.TICK_SIZE}})
    style.apply_layout(fig, title=title, height=520)
    # room for the x title and the legend under the plot; the title under the toolbar
    # that plotly draws over the figure's top while the pointer is on it
    fig.update_layout(margin={"b": 150}, title={"yref": "container", "y": 1.0,
                                                "yanchor": "top", "pad": {"t": 36}})  # fmt: skip
    return fig


def _with_fit(fig: go.Figure, key: str, x, y, unit: str) -> None:
    """Measured points plus the dashed least-squares line, slope in the legend."""
    color = COLORS.get(key)
    fig.add_trace(
        go.Scatter(
            x=x,
            y=y,
            mode="markers+lines",
            name=LABELS.get(key, key),
            line={"color": color, "width": 3},
            marker={"size": 10},
            hovertemplate="T = %{x}<br>%{y:.3g} " + unit + "<extra></extra>",
        )
    )
    if len(x) > 1:
        slope, intercept = loglog_fit(x, y)
        fit = np.exp(intercept) * np.asarray(x, float) ** slope
        fig.add_trace(
            go.Scatter(
                x=x,
                y=fit,
                mode="lines",
                name=f"fit: slope {slope:.2f}",
                line={"color": color, "dash": "dash", "width": 2},
                hoverinfo="skip",
            )
        )


def _kind_rows(scaling: dict) -> list[tuple[str, dict]]:
    """The per-kind rows of a scaling dict (those with a ``T`` list), in their order."""
    return [(k, rows) for k, rows in scaling.items() if isinstance(rows, dict) and "T" in rows]


def scaling_time(scaling: dict) -> go.Figure:
    """Fast-graph time (ms) against sequence length T, log-log, with fitted slopes.

    Args:
        scaling: ``{kind: {"T": [...], "median_ms": [...]}}``, one line per kind in its order
            (entries that are not such rows, e.g. the bench's targets, are skipped).
    """
    fig = go.Figure()
    for key, rows in _kind_rows(scaling):
        _with_fit(fig, key, rows["T"], rows["median_ms"], "ms")
    return _loglog(
        fig, "sequence length T (tokens)", "time per forward pass (ms)", "Time vs length"
    )


def scaling_memory(scaling: dict) -> go.Figure:
    """Peak extra memory (MB) of one forward pass against T, log-log, with fitted slopes."""
    fig = go.Figure()
    for key, rows in _kind_rows(scaling):
        if all(m for m in rows.get("peak_mb", [])):
            _with_fit(fig, key, rows["T"], rows["peak_mb"], "MB")
    return _loglog(fig, "sequence length T (tokens)", "peak extra memory (MB)", "Memory vs length")


def generation_speed(gen: dict) -> go.Figure:
    """Generation throughput (tokens/s) as the sequence grows, one line per method.

    Args:
        gen: ``{method: {"curve": {"length": [...], "tokens_per_s": [...]}}}``.
    """
    fig = go.Figure()
    for key in ("linear_recurrent", "softmax_kv_cache", "softmax_recompute"):
        if key in gen:
            curve = gen[key]["curve"]
            fig.add_trace(
                go.Scatter(
                    x=curve["length"],
                    y=curve["tokens_per_s"],
                    mode="markers+lines",
                    name=LABELS[key],
                    line={"color": COLORS[key], "width": 3},
                    hovertemplate="length %{x}<br>%{y:.0f} tokens/s<extra></extra>",
                )
            )
    return _loglog(fig, "sequence length (tokens)", "tokens per second", "Generation speed")


def carried_memory(mem: dict) -> go.Figure:
    """Bytes carried between generated tokens: recurrent state vs key/value cache."""
    fig = go.Figure()
    series = {"linear_recurrent": "state_bytes", "softmax_kv_cache": "kv_cache_bytes"}
    for key, field in series.items():
        fig.add_trace(
            go.Scatter(
                x=mem["length"],
                y=mem[field],
                mode="markers+lines",
                name=LABELS[key],
                line={"color": COLORS[key], "width": 3},
                hovertemplate="length %{x}<br>%{y:.3s} bytes<extra></extra>",
            )
        )
    return _loglog(fig, "sequence length (tokens)", "bytes carried (float32)", "State vs KV cache")
