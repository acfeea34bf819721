"""Small multiples of every head (rows = layers, columns = heads), token by token for a
short sentence and as an overview of each head for a long one.

The overview is a max-pooling of each (T, T) pattern over square blocks of tokens: a
cell is the largest weight any query of its block gives any key of its block, so a sharp
pattern (the previous token, the first token, an induction stripe) stays visible where a
mean would fade it to 1/block. Its title says so, with the block size.

Pure functions: arrays in, a plain plotly spec out (``viz.spec``); labels are escaped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from viz import spec, style
from viz.heat import HOVER_ATTN, check_tokens, numeric

OVERVIEW_ABOVE = 128  # tokens: a longer sentence's grid is an overview
MAX_VALUES = 150_000  # weights a grid sends at most (~0.8 MB as float32): else an overview
OVERVIEW_CELLS = 64  # blocks per axis of an overview at most


def overview_block(n_maps: int, t: int) -> int:
    """Tokens per block side of the head grid of ``n_maps`` (T, T) maps: 1 (every token)
    unless T > ``OVERVIEW_ABOVE`` or the grid would send more than ``MAX_VALUES``
    weights; then the smallest block that keeps both under their limits, with at most
    ``OVERVIEW_CELLS`` blocks per axis."""
    if t <= OVERVIEW_ABOVE and n_maps * t * t <= MAX_VALUES:
        return 1
    cells = max(1, min(OVERVIEW_CELLS, math.isqrt(MAX_VALUES // n_maps)))
    return math.ceil(t / cells)


def max_pool(attn: np.ndarray, block: int) -> tuple[np.ndarray, np.ndarray]:
    """Max over square blocks of the last two axes.

    Args:
        attn: (..., T, T) weights.
        block: tokens per block side; the last block holds the rest (T mod block).

    Returns:
        ``(pooled (..., n, n), starts (n,))`` with n = ceil(T / block): pooled[..., i, j]
        is the max of attn[..., rows of block i, columns of block j], starts the first
        token of each block.
    """
    t = attn.shape[-1]
    starts = np.arange(0, t, block)  # (n,)
    full = t - t % block  # rows in whole blocks: pooled by a reshape (8x faster than reduceat)
    lead = attn.shape[:-2]
    by_query = attn[..., :full, :].reshape(*lead, full // block, block, t).max(axis=-2)
    if full < t:  # the last, smaller block of queries
        rest = attn[..., full:, :].max(axis=-2, keepdims=True)  # (..., 1, T)
        by_query = np.concatenate([by_query, rest], axis=-2)  # (..., n, T)
    return np.maximum.reduceat(by_query, starts, axis=-1), starts  # (..., n, n)


def block_labels(starts: np.ndarray, t: int) -> list[str]:
    """``"0–3"``, ``"4–7"``, ...: the first and last token of each block."""
    ends = [*(int(s) - 1 for s in starts[1:]), t - 1]
    return [f"{int(s)}–{e}" if e > s else str(int(s)) for s, e in zip(starts, ends, strict=True)]


def overview_title(t: int, block: int) -> str:
    """What an overview of T tokens in blocks of ``block`` shows, as its title: how it
    was pooled and how large the blocks are."""
    n = math.ceil(t / block)
    last = t - (n - 1) * block
    rest = f" (the last of {last} tokens)" if last != block else ""
    return (
        f"Overview of {t} tokens: each cell is the max over a block of {block} × {block} "
        f"(queries × keys)<br>{n} blocks per axis{rest}. Pick a layer and head above to see "
        "every token."
    )


def _grid_cell(k: int, x0: float, y1: float, width: float, height: float) -> tuple[dict, dict]:
    """(xaxis, yaxis) domains of small multiple ``k`` (1-based) with its top-left
    corner at (x0, y1) in paper coordinates."""
    x = {"domain": [x0, min(1.0, x0 + width)], "anchor": "y" if k == 1 else f"y{k}"}
    y = {"domain": [max(0.0, y1 - height), y1], "anchor": "x" if k == 1 else f"x{k}"}
    return x, y


def head_grid(attn: object, tokens: Sequence[object], max_tokens_label: int = 12,
              kv_heads: int | None = None) -> spec.Spec:  # fmt: skip
    """Small multiples of every head: rows = layers, columns = heads; an overview
    (:func:`max_pool` over blocks of :func:`overview_block` tokens, said in the title)
    for a long sentence or a large grid.

    Args:
        attn: (L, H, T, T) attention weights.
        tokens: T token strings.
        max_tokens_label: tick labels are drawn only when T <= this (else hidden);
            y labels on the first column and x labels on the last row only.
        kv_heads: grouped-query attention's H_kv < H: each subplot title names the
            key/value head its query head reads (``"L0 H1 · kv0"``).

    Returns:
        Spec with L*H heatmaps sharing one colour axis (0..1; signed weights: symmetric at 0); subplot
        titles ``"L0 H1"``. Token by token: each heatmap (T, T), the tokens as
        categories. Overview: each (n, n), the blocks' token ranges (``"4–7"``) as
        categories, hover naming both ranges and the block's max weight.

    Raises:
        ValueError: if attn is not (L, H, T, T) or ``len(tokens) != T``.
    """
    a = numeric(attn)
    if a.ndim != 4 or a.shape[2] != a.shape[3]:
        raise ValueError(f"attn must have shape (L, H, T, T), got {a.shape}")
    n_layers, n_heads, t, _ = a.shape
    check_tokens(tokens, t, "attn")
    block = overview_block(n_layers * n_heads, t)
    if block == 1:
        labels, hover, title, colorbar = style.token_labels(tokens), HOVER_ATTN, None, "weight"
    else:
        a, starts = max_pool(a, block)  # (L, H, n, n)
        labels, title, colorbar = block_labels(starts, t), overview_title(t, block), "max weight"
        hover = "queries %{y}<br>keys %{x}<br>max weight: %{z:.3f}<extra></extra>"
    group = n_heads // kv_heads if kv_heads and kv_heads < n_heads else None
    fig = _small_multiples(a, labels, hover, t <= max_tokens_label, colorbar, group)
    if title is not None:
        fig["layout"]["title"] = {"text": title, "font": {"size": style.SUBPLOT_TITLE_SIZE}}
        fig["layout"]["margin"]["t"] = 110  # two lines of title
    return fig


def _small_multiples(
    a: np.ndarray,
    labels: list[str],
    hover: str,
    show: bool,
    colorbar: str,
    group: int | None = None,
) -> spec.Spec:
    """The grid of (L, H, n, n) maps ``a`` with ``labels`` on both axes of each; with
    ``group`` query heads per key/value head, each title names its key/value head."""
    n_layers, n_heads = a.shape[:2]
    h_gap, v_gap = 0.03, (0.08 if n_layers > 1 else 0.0)
    width = (1.0 - h_gap * (n_heads - 1)) / n_heads
    height = (1.0 - v_gap * (n_layers - 1)) / n_layers
    small = {"size": style.SMALL_TICK_SIZE}
    traces, layout, titles = [], {}, []
    for layer in range(n_layers):
        for head in range(n_heads):
            k = layer * n_heads + head + 1
            x0 = head * (width + h_gap)
            y1 = 1.0 - layer * (height + v_gap)  # layer 0 on top
            x, y = _grid_cell(k, x0, y1, width, height)
            suffix = "" if k == 1 else str(k)
            traces.append(
                {
                    "type": "heatmap",
                    "z": a[layer, head],  # (n, n)
                    "x": labels,
                    "y": labels,
                    "coloraxis": "coloraxis",
                    "hovertemplate": f"L{layer} H{head}<br>" + hover,
                    "xaxis": f"x{suffix}",
                    "yaxis": f"y{suffix}",
                }
            )
            layout[f"xaxis{suffix}"] = {
                **x,
                "type": "category",
                "tickangle": -45,
                "automargin": True,
                "tickfont": small,
                "showticklabels": show and layer == n_layers - 1,
            }
            layout[f"yaxis{suffix}"] = {
                **y,
                "type": "category",
                "autorange": "reversed",  # first token at the top
                "automargin": True,
                "tickfont": small,
                "showticklabels": show and head == 0,
            }
            name = f"L{layer} H{head}" + (f" · kv{head // group}" if group else "")
            titles.append(spec.subplot_title(name, x0 + width / 2, y1))
    layout["annotations"] = titles
    colors = style.weight_colors(a)  # signed weights (delta): diverging at 0
    layout["coloraxis"] = {
        "cmin": colors["zmin"],
        "cmax": colors["zmax"],
        **({"cmid": 0.0} if "zmid" in colors else {}),
        "colorscale": style.colorscale(colors["colorscale"]),
        "colorbar": {"title": {"text": colorbar, "side": "right"}},
    }
    fig = spec.figure(traces, layout, height=max(300, 230 * n_layers + 120))
    return spec.square_cells(fig)
