"""Figures of the lesson "Why linear attention forgets": one recall example's answers,
recall accuracy against the number of pairs, and the state's capacity curves.

Pure functions: numbers in, a plain plotly spec out (``viz.spec``); labels are
HTML-escaped (they are vocabulary words).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from viz import spec, style

KIND_COLORS = {"softmax": "#1f77b4", "linear": "#ff7f0e", "delta": "#2ca02c"}


def recall_answers(words: Sequence[str], probs: Mapping[str, np.ndarray], answer: int) -> spec.Spec:
    """Grouped bars: each model's probability (y, 0..1) of each candidate value word (x);
    the right value's label is marked with ✓.

    Args:
        words: the n value words; probs: model name -> (n,) probabilities; answer: index.

    Raises:
        ValueError: a probability vector whose length is not n.
    """
    n = len(words)
    labels = [
        f"✓ {style.escape(w)}" if j == answer else style.escape(w) for j, w in enumerate(words)
    ]
    data = []
    for name, p in probs.items():
        p = np.asarray(p, dtype=float).reshape(-1)
        if p.shape[0] != n:
            raise ValueError(f"{name}: {p.shape[0]} probabilities for {n} values")
        data.append({"type": "bar", "name": name, "x": labels, "y": p,
                     "marker": {"color": KIND_COLORS.get(name, "#7f7f7f")},
                     "hovertemplate": f"{name}: %{{x}} %{{y:.1%}}<extra></extra>"})  # fmt: skip
    layout = {
        "barmode": "group",
        "xaxis": {
            **spec.titled("the values of the sequence (✓ the right one)"),
            "type": "category",
        },
        "yaxis": {
            **spec.titled("probability among the n values"),
            "range": [0, 1],
            "tickformat": ".0%",
        },
    }
    return spec.figure(data, layout, title="What each model answers")


def accuracy_by_pairs(
    recall: Mapping[str, Mapping[str, Mapping[str, float]]], rows_max_pairs: int | None = None
) -> spec.Spec:
    """Lines: recall (y, 0..1) against the number of pairs n (x, log 2) per model, as the
    model card counts it: the top token over the whole vocabulary (solid), the ranking rule
    (dotted, thin: the right value beats the other n − 1; chance 1 / n, grey) and the top
    token on held-out words (dashed, diamonds); a dotted line at ``rows_max_pairs``, the
    largest n a synthetic recall row holds, when a model was trained with them.

    Args:
        recall: model -> the card's ``recall``: ``{"top_token": {str(n): share},
            "ranking": {...}, "held_out_top_token": {...}}`` (a missing one is not drawn).
        rows_max_pairs: n of the trained range's end, or None.
    """
    lines = (("top_token", "top token", "solid", 3, "circle"),
             ("ranking", "ranking rule", "dot", 1.5, "circle-open"),
             ("held_out_top_token", "top token, held-out words", "dash", 2, "diamond"))  # fmt: skip
    data, every_n = [], set()
    for name, by_rule in recall.items():
        color = KIND_COLORS.get(name, "#7f7f7f")
        for rule, label, dash, width, symbol in lines:
            by_n = by_rule.get(rule) or {}
            ns = sorted(int(n) for n in by_n)
            every_n.update(ns)
            if not ns:
                continue
            data.append({"type": "scatter", "mode": "lines+markers", "name": f"{name}, {label}",
                         "x": ns, "y": [by_n[str(n)] for n in ns], "legendgroup": name,
                         "line": {"color": color, "width": width, "dash": dash},
                         "marker": {"symbol": symbol, "size": 9 if rule == "top_token" else 7},
                         "hovertemplate": f"{name}, {label}: n = %{{x}}, %{{y:.0%}}<extra></extra>"})  # fmt: skip
    ns = sorted(every_n)
    data.append({"type": "scatter", "mode": "lines", "name": "chance of the ranking rule, 1/n",
                 "x": ns, "y": [1 / n for n in ns], "line": {"dash": "dot", "color": "#888888"}})  # fmt: skip
    if rows_max_pairs:
        data.append({"type": "scatter", "mode": "lines", "x": [rows_max_pairs] * 2, "y": [0, 1.05],
                     "name": f"n = {rows_max_pairs}: the recall rows' largest n",
                     "line": {"dash": "dot", "color": "#444444", "width": 1}})  # fmt: skip
    layout = {
        "xaxis": {**spec.titled("pairs n in the sequence"), "type": "log", "tickvals": ns},
        "yaxis": {**spec.titled("recall"), "range": [0, 1.05], "tickformat": ".0%"},
    }
    title = "Recall on the model card: top token (solid), ranking (dotted)"
    return spec.figure(data, layout, title=title)


def capacity(curves: Mapping) -> spec.Spec:
    """Lines: mean relative recall error (y) against pairs n (x) for the additive state
    and the delta rule (``lessons.forgetting.capacity_curves``), a dotted line at n = d."""
    ns, d = curves["pairs"], curves["d"]
    rows = (("additive (linear attention)", "additive", KIND_COLORS["linear"]),
            ("delta rule, β = 1", "delta", KIND_COLORS["delta"]))  # fmt: skip
    data = [
        {"type": "scatter", "mode": "lines+markers", "name": name, "x": ns, "y": curves[key],
         "line": {"color": color, "width": 3},
         "hovertemplate": f"{name}: n = %{{x}}, error %{{y:.2f}}<extra></extra>"}
        for name, key, color in rows
    ]  # fmt: skip
    top = max(max(curves["additive"]), max(curves["delta"]), 1e-9)
    data.append({"type": "scatter", "mode": "lines", "name": f"n = d = {d}", "x": [d, d],
                 "y": [0, top], "line": {"dash": "dot", "color": "#888888"}})  # fmt: skip
    layout = {
        "xaxis": {**spec.titled("pairs n stored"), "type": "log", "tickvals": ns},
        "yaxis": {**spec.titled("mean |Sᵀk − v| / |v|"), "rangemode": "tozero"},
    }
    title = f"Recall from one {d} × {d} state, random unit keys: an optimistic bound"
    return spec.figure(data, layout, title=title)
