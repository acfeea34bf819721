"""The causal mask as three panels: raw scores, the mask, the masked and normalized
weights (softmax, or linear attention's division by the row sum plus ε); for a graph
whose mask is already in its scores (a foreign ONNX graph), what its Softmax receives,
the mask as measured and the weights.

Pure functions: arrays in, a plain plotly spec out (``viz.spec``); labels are
HTML-escaped (user text).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from viz import fit, spec, style
from viz.click import add_click_layer
from viz.heat import check_tokens, heat_trace, square

MASK_PANELS = {
    # attention kind -> (panel titles, what a blocked entry becomes, scores colour scale);
    # {eps} is the model's normalizer epsilon: linear attention divides by row sum + eps.
    "softmax": (("scores QKᵀ/√d_head", "causal mask", "softmax(masked)"), "blocked (−∞)", "div"),
    "linear": (
        ("scores φ(Q)φ(K)ᵀ", "causal mask", "masked ÷ (row sum + ε), ε = {eps:g}"),
        "blocked (set to 0)",
        "seq",
    ),
    # DeltaNet: the implied matrix A = (QKᵀ ⊙ M)(I + tril(diag(β)KKᵀ, −1))⁻¹ diag(β); its
    # entries can be negative and rows need not sum to 1 (a diverging scale).
    "delta": (
        ("scores QKᵀ (unit q, k)", "causal mask", "(masked)(I + L)⁻¹ diag(β): implied"),
        "blocked (set to 0)",
        "div",
    ),
}
SIGNED_WEIGHTS = {"delta"}  # kinds whose implied weights can be negative
_PANEL_GAP = 0.03  # horizontal space between the three panels (paper fraction)
PANEL_PX = {"x": 260, "y": 320}  # a panel's plot in px (full width of a 1500 px window)
PANEL_1280_PX = 215  # a panel's plot width at a 1280 px window (labels on the first only)
MASK_BAR = "mask"
# The mask panel's legend: its two colours named on a two-tick colour bar.
MASK_TICKS = {"tickmode": "array", "tickvals": [0.25, 0.75], "ticktext": ["blocked", "allowed"],
              "ticks": ""}  # fmt: skip


def _checked_pair(scores, weights, tokens, what: str):
    """Two (T, T) float arrays of one head and its axis labels, after the checks both
    panel figures make.

    Raises:
        ValueError: non-square inputs, a shape mismatch or a wrong token count.
    """
    s = square(scores, what)
    w = square(weights, "weights")
    if s.shape != w.shape:
        raise ValueError(f"{what} {s.shape} and weights {w.shape} differ")
    check_tokens(tokens, s.shape[0], what)
    return s, w, style.token_labels(tokens)


def causal_mask_panels(
    scores: object,
    weights: object,
    tokens: Sequence[object],
    attention: str = "softmax",
    eps: float = 1e-6,
    window: int | None = None,
) -> spec.Spec:
    """Three panels: raw scores -> causal mask -> masked, normalized weights.

    For ``attention="softmax"`` the scores are QKᵀ/√d_head (signed, diverging colours)
    and blocked entries become −∞ before the softmax; for ``"linear"`` they are
    φ(Q)φ(K)ᵀ (positive, sequential colours) and blocked entries become 0 before
    each row is divided by its sum plus epsilon, φ(q_i)ᵀz_i + ε (Katharopoulos et al. 2020,
    eq. 9; ``eps`` is the model's ε, written in the third panel's title).

    Args:
        scores: (T, T) pre-mask scores (QK^T/sqrt(D)); diverging scale, symmetric
            around 0 at the true max |finite score|.
        weights: (T, T) attention weights after masking + softmax (0..1); for
            ``"delta"`` the implied matrix (signed: a diverging scale, symmetric at 0).
        tokens: T token strings.
        attention: ``"softmax"``, ``"linear"`` or ``"delta"``.
        eps: linear attention's normalizer epsilon (the model's ``cfg.attn_eps``).
        window: a sliding window (Mistral's ``sliding_window``): the mask also blocks
            keys ``window`` or more tokens before the query, and its title says so.

    Returns:
        Spec with three heatmaps: scores, mask (1 = allowed, 0 = blocked, key j > query i;
        its hover gives the 0/1 and what a blocked entry becomes), weights. Each has its
        own horizontal colour bar (mask has none). On a long sentence every k-th token
        labels the axes (``viz.fit.label_ticks``); the hover names every cell's tokens.

    Raises:
        ValueError: on non-square inputs, shape mismatch, wrong token count or an
            unknown attention kind.
    """
    if attention not in MASK_PANELS:
        raise ValueError(f"unknown attention kind {attention!r}")
    titles, blocked, score_scale = MASK_PANELS[attention]
    titles = [t.format(eps=eps) for t in titles]
    s, w, labels = _checked_pair(scores, weights, tokens, "scores")
    t = s.shape[0]
    mask = np.tril(np.ones((t, t), dtype=np.uint8))  # (T, T): 1 = allowed, 0 = blocked
    if window is not None:  # i - window < j <= i
        mask = mask - np.tril(np.ones((t, t), dtype=np.uint8), -window)  # (T, T)
        titles[1] = f"causal mask, sliding window {window}"
    lo, hi = style.symmetric_range(s)
    hover = "query: %{y}<br>key: %{x}<br>"
    if score_scale == "div":
        score_colors = {"zmin": lo, "zmax": hi, "zmid": 0.0, "colorscale": style.DIVERGING}
    else:  # phi(q)·phi(k) > 0: the true range is 0 .. max
        score_colors = {"zmin": 0.0, "zmax": hi, "colorscale": style.SEQUENTIAL}
    grey_green = {"zmin": 0, "zmax": 1, "colorscale": [[0, "#bbbbbb"], [1, "#2ca02c"]]}
    score_hover = hover + "score: %{z:.3f}<extra></extra>"
    # The mask's hover reads its 0/1 value: T x T words of hover text would be 16 MB at T = 1024.
    mask_hover = hover + f"mask: %{{z}} (1 = allowed, 0 = {blocked})<extra></extra>"
    panels = [
        heat_trace(s, labels, labels, **score_colors, hovertemplate=score_hover),
        heat_trace(mask, labels, labels, **grey_green, showscale=False, hovertemplate=mask_hover),
        heat_trace(w, labels, labels, **_weight_colors(w, attention)),
    ]
    fig = spec.square_cells(_three_panels(panels, titles))
    return with_click_layers(fig, (s, mask, w), ("score", "mask"))


def _weight_colors(weights: np.ndarray, attention: str) -> dict:
    """0..1 sequential colours, or, for signed implied weights, diverging at 0."""
    if attention not in SIGNED_WEIGHTS:
        return {"zmin": 0.0, "zmax": 1.0, "colorscale": style.SEQUENTIAL}
    lo, hi = style.symmetric_range(weights)
    return {"zmin": lo, "zmax": hi, "zmid": 0.0, "colorscale": style.DIVERGING}


PANEL_CLICK_MAX_T = 64  # all three panels clickable: 3 x 4,096 points; then the weights alone


def with_click_layers(fig: spec.Spec, values: tuple, what: tuple[str, str]) -> spec.Spec:
    """``fig`` (three panels, ``x``/``y``, ``x2``/``y2``, ``x3``/``y3``) with a click layer
    (``viz.click.add_click_layer``: a click on a cell picks its query) on each panel up to
    ``PANEL_CLICK_MAX_T`` tokens, on the third (weights) alone up to ``CLICK_MAX_T``: the
    page's invisible points stay at most 16,384. ``values`` are the three (T, T) panels,
    ``what`` the first two's hover names (the third's is the weight)."""
    labels = fig["data"][0]["x"]
    if len(labels) <= PANEL_CLICK_MAX_T:
        add_click_layer(fig, labels, values[0], ("x", "y"), what[0])
        add_click_layer(fig, labels, values[1], ("x2", "y2"), what[1])
    return add_click_layer(fig, labels, values[2], ("x3", "y3"))


def _three_panels(panels: list[dict], titles: Sequence[str]) -> spec.Spec:
    """Scores, mask and weights side by side, each with its horizontal colour bar; on a
    long sentence every k-th token labels the axes (``viz.fit.label_ticks``)."""
    t = len(panels[0]["x"])
    if not fit.MAX_LABELLED >= t > PANELS_IN_A_ROW_MAX:
        return _panels_in_a_row(panels, titles, t)
    return _panels_stacked(panels, titles, t)


PANELS_IN_A_ROW_MAX = 16  # tokens: three panels across a 1280 px window label each one
STACKED_PANEL_PX = 560  # the heatmap rows of one stacked panel (40 labels at 11 px + room)


def _panels_in_a_row(panels: list[dict], titles: Sequence[str], t: int) -> spec.Spec:
    """The three panels side by side, one colour bar under each (the mask's says what
    its two colours mean); token labels on the first panel's rows only: the three share
    them (the middle and right panels' labels overlapped their neighbours)."""
    # at the figure's bottom edge: a bar at paper y = -0.3 ran into the key titles when
    # the figure was made shorter for its square cells (ui/square.js)
    bar = {"orientation": "h", "yref": "container", "y": 0.0, "yanchor": "bottom", "len": 0.28,
           "thickness": 14}  # fmt: skip
    width = (1.0 - 2 * _PANEL_GAP) / 3
    layout: dict = {"annotations": [], "margin": {"b": 160}}  # room for the colour bars
    bars = [(0.14, "score"), (0.5, MASK_BAR), (0.86, "weight")]
    labels = panels[0]["x"]
    x_px = PANEL_PX["x"] if t > fit.MAX_LABELLED else PANEL_1280_PX
    for col, (trace, (x, text)) in enumerate(zip(panels, bars, strict=True), start=1):
        suffix = "" if col == 1 else str(col)
        trace["colorbar"] = {**bar, "x": x, "title": {"text": text, "side": "bottom"}}
        if col == 2:
            trace.update(showscale=True, colorbar={**trace["colorbar"], **MASK_TICKS})
        trace["xaxis"], trace["yaxis"] = f"x{suffix}", f"y{suffix}"
        x0 = (col - 1) * (width + _PANEL_GAP)
        xaxis, yaxis = spec.heat_axes(**spec.titled("key"), **fit.every_label(labels, x_px, x=True))
        yaxis.update(fit.every_label(labels, x_px))  # square cells: rows as wide as columns
        if col > 1:
            yaxis["showticklabels"] = False
        layout[f"xaxis{suffix}"] = {**xaxis, "domain": [x0, x0 + width], "anchor": f"y{suffix}"}
        layout[f"yaxis{suffix}"] = {**yaxis, "domain": [0.0, 1.0], "anchor": f"x{suffix}"}
        layout["annotations"].append(spec.subplot_title(titles[col - 1], x0 + width / 2, 1.0))
    layout["yaxis"].update(spec.titled("query"))
    return spec.figure(panels, layout, height=600)


def _panels_stacked(panels: list[dict], titles: Sequence[str], t: int) -> spec.Spec:
    """The three panels one above the other, each across the page: a sentence of
    17 to ``fit.MAX_LABELLED`` tokens keeps every label in each panel."""
    gap_px = 150  # between panels: the key labels and the next title
    height = 3 * STACKED_PANEL_PX + 2 * gap_px + style.MARGIN["t"] + 120
    plot_px = height - style.MARGIN["t"] - style.MARGIN["b"]
    layout: dict = {"annotations": []}
    labels = panels[0]["x"]
    for row, trace in enumerate(panels, start=1):
        suffix = "" if row == 1 else str(row)
        top = 1.0 - (row - 1) * (STACKED_PANEL_PX + gap_px) / plot_px
        bottom = top - STACKED_PANEL_PX / plot_px
        bar = {"x": 1.02, "xanchor": "left", "y": (top + bottom) / 2, "yanchor": "middle"}
        text = ("score", MASK_BAR, "weight")[row - 1]
        trace["colorbar"] = {**bar, "len": STACKED_PANEL_PX / plot_px, "title": {"text": text}}
        if row == 2:
            trace.update(showscale=True, colorbar={**trace["colorbar"], **MASK_TICKS})
        trace["xaxis"], trace["yaxis"] = f"x{suffix}", f"y{suffix}"
        xaxis, yaxis = spec.heat_axes(
            **spec.titled("key"), **fit.every_label(labels, fit.FULL_1280_PX, x=True)
        )
        yaxis.update(fit.every_label(labels, STACKED_PANEL_PX), **spec.titled("query"))
        layout[f"xaxis{suffix}"] = {**xaxis, "anchor": f"y{suffix}"}
        layout[f"yaxis{suffix}"] = {**yaxis, "domain": [bottom, top], "anchor": f"x{suffix}"}
        layout["annotations"].append(spec.subplot_title(titles[row - 1], 0.5, top))
    return spec.figure(panels, layout, height=height)


SOFTMAX_INPUT_TITLES = (
    "what the Softmax receives (mask included)",
    "mask as measured: weight exactly 0",
    "Softmax output (weights)",
)


def softmax_input_panels(
    softmax_input: object, weights: object, tokens: Sequence[object]
) -> spec.Spec:
    """Three panels for a graph whose mask is inside its scores (a foreign ONNX graph):
    what its Softmax receives, the mask as measured, and the Softmax output.

    The graph's own mask is already in its Softmax input, as −inf or a large negative
    number (−3.4e38 from ``scaled_dot_product_attention``'s decomposition), which no
    colour scale can show beside ordinary scores. So the mask is *measured*: a key is
    blocked where the softmax gave it weight exactly 0 (its input was −inf or so far
    below the row's largest that exp underflowed); those cells are left blank in the
    first panel, whose colours span the remaining scores.

    Args:
        softmax_input: (T, T) what the Softmax node receives (``masked_scores``).
        weights: (T, T) its output, the attention weights (0..1).
        tokens: T token strings.

    Raises:
        ValueError: on non-square inputs, a shape mismatch or a wrong token count.
    """
    s, w, labels = _checked_pair(softmax_input, weights, tokens, "softmax input")
    blocked = w == 0  # (T, T): exp underflowed to exactly 0
    shown = np.where(blocked, np.nan, s).astype(np.float32)  # (T, T) blank where blocked
    lo, hi = style.symmetric_range(shown)
    hover = "query: %{y}<br>key: %{x}<br>"
    green = [[0, "#bbbbbb"], [1, "#2ca02c"]]
    panels = [
        heat_trace(
            shown,
            labels,
            labels,
            zmin=lo,
            zmax=hi,
            zmid=0.0,
            colorscale=style.DIVERGING,
            hovertemplate=hover + "Softmax input: %{z:.3f}<extra></extra>",
        ),
        heat_trace(
            (~blocked).astype(np.uint8),
            labels,
            labels,
            zmin=0,
            zmax=1,
            colorscale=green,
            showscale=False,
            hovertemplate=hover + "mask: %{z} (1 = allowed, 0 = blocked: weight 0)<extra></extra>",
        ),  # fmt: skip
        heat_trace(w, labels, labels, zmin=0.0, zmax=1.0, colorscale=style.SEQUENTIAL),
    ]
    fig = spec.square_cells(_three_panels(panels, SOFTMAX_INPUT_TITLES))
    return with_click_layers(fig, (shown, ~blocked, w), ("Softmax input", "mask"))


def row_outlined(layout: dict, t: int, query_index: int) -> dict:
    """The layout of three (T, T) panels with row ``query_index`` outlined in each (a
    new dict; ``layout`` is not modified).

    Raises:
        ValueError: for a row outside [0, t).
    """
    if not 0 <= query_index < t:
        raise ValueError(f"query_index {query_index} outside [0, {t})")
    outline = {"type": "rect", "x0": -0.5, "x1": t - 0.5, "y0": query_index - 0.5,
               "y1": query_index + 0.5, "line": {"color": style.HIGHLIGHT_COLOR, "width": 3}}  # fmt: skip
    shapes = [{**outline, "xref": f"x{s}", "yref": f"y{s}"} for s in ("", "2", "3")]
    return {**layout, "shapes": [*layout.get("shapes", []), *shapes]}
