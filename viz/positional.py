"""Altair charts of the positional encoding ``pos_enc`` (T, C).

Pure functions: numpy-compatible arrays in, ``alt.Chart`` out. Data is passed as
long-form pandas DataFrames (Streamlit ships those as Arrow, so altair's default
5000-row limit only matters when calling ``to_dict()`` outside Streamlit).
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from viz import style

_WIDTH = 560
_HEIGHT = 360


def default_dims(C: int) -> list[int]:
    """The encoding dimensions the positional view plots first (of ``C`` = d_model): a
    sin/cos pair of the fastest frequency, then slower ones: 0, 1, C/8, C/4, C/2."""
    return sorted({d for d in (0, 1, C // 8, C // 4, C // 2) if d < C})


def _pos_enc(pos_enc: object) -> np.ndarray:
    arr = np.asarray(pos_enc, dtype=float)
    if arr.ndim != 2:
        raise ValueError(f"pos_enc must have shape (T, C), got {arr.shape}")
    return arr


def _symmetric_scale(values: np.ndarray) -> alt.Scale:
    lo, hi = style.symmetric_range(values)
    return alt.Scale(scheme=style.DIVERGING_ALTAIR, reverse=True, domain=[lo, hi], domainMid=0)


def _axis(title: str, **kw: object) -> alt.Axis:
    return alt.Axis(
        title=title,
        labelFontSize=style.TICK_SIZE,
        titleFontSize=style.FONT_SIZE,
        labelColor=style.FONT_COLOR,
        titleColor=style.FONT_COLOR,
        **kw,
    )


def _legend(title: str) -> alt.Legend:
    return alt.Legend(
        title=title,
        labelFontSize=style.TICK_SIZE,
        titleFontSize=style.FONT_SIZE,
        labelColor=style.FONT_COLOR,
        titleColor=style.FONT_COLOR,
    )


def _finish(chart: alt.Chart, title: str) -> alt.Chart:
    """Size and title; fonts are set per axis/legend (no ``configure_*``) so charts compose."""
    return chart.properties(
        title=alt.TitleParams(title, fontSize=style.TITLE_SIZE), width=_WIDTH, height=_HEIGHT
    )


def dimension_name(d: int, sinusoidal: bool) -> str:
    """``"dim 4 (sin)"`` / ``"dim 5 (cos)"`` for sinusoidal encodings, else ``"dim 4"``.

    Sinusoidal: PE[pos, 2i] = sin(pos / 10000^(2i/C)), PE[pos, 2i+1] = cos(...)
    (Vaswani et al. 2017, section 3.5).
    """
    return f"dim {d} ({'cos' if d % 2 else 'sin'})" if sinusoidal else f"dim {d}"


def pe_curves(
    pos_enc: object,
    dims: Sequence[int] = (0, 1, 2, 3),
    sinusoidal: bool = False,
    sentence_length: int | None = None,
) -> alt.Chart:
    """Line chart of encoding value vs position, one line per chosen dimension.

    Args:
        pos_enc: (P, C) positional encoding over P positions (e.g. the whole context).
        dims: dimension indices in [0, C) to draw.
        sinusoidal: name the lines ``dim 2 (sin)``, ``dim 3 (cos)``.
        sentence_length: if given, a dashed rule at the sentence's last position (at
            the last of the P positions, saying where the sentence ends, when it is longer).

    Returns:
        Chart (a layer when ``sentence_length`` is given) with fields ``position``
        (x), ``value`` (y) and ``dimension`` (colour, nominal).

    Raises:
        ValueError: if pos_enc is not 2-D, dims is empty or a dim is out of range.
    """
    pe = _pos_enc(pos_enc)
    t, c = pe.shape
    dims = [int(d) for d in dims]
    if not dims:
        raise ValueError("dims must not be empty")
    bad = [d for d in dims if not 0 <= d < c]
    if bad:
        raise ValueError(f"dims {bad} outside [0, {c})")
    names = [dimension_name(d, sinusoidal) for d in dims]
    df = pd.DataFrame(
        {
            "position": np.tile(np.arange(t), len(dims)),
            "dimension": np.repeat(names, t),
            "value": pe[:, dims].T.reshape(-1),
        }
    )
    chart = (
        alt.Chart(df)
        .mark_line(point=t <= 24, strokeWidth=3)
        .encode(
            x=alt.X("position:Q", axis=_axis("position")),
            y=alt.Y("value:Q", axis=_axis("value")),
            color=alt.Color("dimension:N", legend=_legend("dimension"), sort=names),
            tooltip=["position:Q", "dimension:N", alt.Tooltip("value:Q", format=".3f")],
        )
    )
    if sentence_length is not None:
        end = min(sentence_length, t) - 1
        label = "end of your sentence"
        if sentence_length > t:
            label = f"your sentence goes on to position {sentence_length - 1}"
        rule = pd.DataFrame({"position": [end], "label": [label]})
        # the label beside the rule, on the side with room for it
        side = {"align": "left", "dx": 4} if end < t / 2 else {"align": "right", "dx": -4}
        base = alt.Chart(rule).encode(x="position:Q")
        chart = alt.layer(
            chart,
            base.mark_rule(strokeDash=[6, 4], color=style.FONT_COLOR),
            base.mark_text(fontSize=style.TICK_SIZE, dy=-8, **side).encode(
                y=alt.value(0), text="label:N"
            ),
        )
    return _finish(chart, "Positional encoding per dimension")


def _rect_heatmap(z: np.ndarray, y: str, x: str, value: str, legend: str) -> alt.Chart:
    """Rect heatmap of ``z`` (R, K): row r along ``y`` (top = 0), column k along ``x``,
    field ``value`` in a diverging colour symmetric around 0 at the true max |z|."""
    rows, cols = z.shape
    df = pd.DataFrame(
        {
            y: np.repeat(np.arange(rows), cols),
            x: np.tile(np.arange(cols), rows),
            value: z.reshape(-1),
        }
    )
    return (
        alt.Chart(df)
        .mark_rect()
        .encode(
            x=alt.X(f"{x}:O", axis=_axis(x, labelOverlap=True)),
            y=alt.Y(f"{y}:O", axis=_axis(y, labelOverlap=True)),
            color=alt.Color(f"{value}:Q", legend=_legend(legend), scale=_symmetric_scale(z)),
            tooltip=[f"{y}:O", f"{x}:O", alt.Tooltip(f"{value}:Q", format=".3f")],
        )
    )


def pe_heatmap(pos_enc: object) -> alt.Chart:
    """Heatmap of the whole encoding: position (y, top = 0) x dimension (x).

    Args:
        pos_enc: (T, C) positional encoding.

    Returns:
        Chart with fields ``position``, ``dimension`` and ``value`` (diverging colour,
        symmetric around 0 at the true max |value|).

    Raises:
        ValueError: if pos_enc is not 2-D.
    """
    pe = _pos_enc(pos_enc)  # (T, C)
    chart = _rect_heatmap(pe, "position", "dimension", "value", "value")
    return _finish(chart, "Positional encoding")  # axes: position × dimension


def pe_similarity(pos_enc: object) -> alt.Chart:
    """Heatmap of dot-product similarity between the encodings of every two positions.

    Args:
        pos_enc: (T, C) positional encoding; the chart shows ``pos_enc @ pos_enc.T`` (T, T).

    Returns:
        Chart with fields ``position i`` (y), ``position j`` (x) and ``similarity``
        (diverging colour, symmetric around 0).

    Raises:
        ValueError: if pos_enc is not 2-D.
    """
    pe = _pos_enc(pos_enc)  # (T, C)
    chart = _rect_heatmap(pe @ pe.T, "position i", "position j", "similarity", "dot product")
    return _finish(chart, "Position-to-position similarity")
