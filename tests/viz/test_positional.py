"""Altair positional-encoding charts, checked through to_dict()."""

from __future__ import annotations

import altair as alt
import numpy as np
import pytest

from viz import positional


def sinusoidal(t: int, c: int) -> np.ndarray:
    pos = np.arange(t)[:, None]
    i = np.arange(0, c, 2)[None, :]
    ang = pos / 10000 ** (i / c)
    pe = np.zeros((t, c))
    pe[:, 0::2] = np.sin(ang)
    pe[:, 1::2] = np.cos(ang)
    return pe


PE = sinusoidal(12, 8)


def rows(spec: dict) -> list[dict]:
    return next(iter(spec["datasets"].values()))


def test_pe_curves_encodings():
    chart = positional.pe_curves(PE, dims=(0, 1, 5))
    assert isinstance(chart, alt.Chart)
    spec = chart.to_dict()
    enc = spec["encoding"]
    assert enc["x"]["field"] == "position" and enc["x"]["axis"]["title"] == "position"
    assert enc["y"]["field"] == "value" and enc["y"]["axis"]["title"] == "value"
    assert enc["color"]["field"] == "dimension"
    data = rows(spec)
    assert len(data) == 12 * 3
    assert {r["dimension"] for r in data} == {"dim 0", "dim 1", "dim 5"}
    v = [r["value"] for r in data if r["dimension"] == "dim 5"]
    np.testing.assert_allclose(v, PE[:, 5])
    assert enc["x"]["axis"]["labelFontSize"] >= 16


def test_pe_curves_errors():
    with pytest.raises(ValueError):
        positional.pe_curves(PE, dims=(8,))
    with pytest.raises(ValueError):
        positional.pe_curves(PE, dims=())
    with pytest.raises(ValueError):
        positional.pe_curves(PE[0])


def test_pe_heatmap():
    spec = positional.pe_heatmap(PE.tolist()).to_dict()
    enc = spec["encoding"]
    assert spec["mark"]["type"] == "rect"
    assert enc["x"]["field"] == "dimension"
    assert enc["y"]["field"] == "position"
    assert enc["color"]["field"] == "value"
    scale = enc["color"]["scale"]
    assert scale["domainMid"] == 0
    assert scale["domain"][0] == -scale["domain"][1]
    assert len(rows(spec)) == PE.size


def test_pe_similarity():
    spec = positional.pe_similarity(PE).to_dict()
    enc = spec["encoding"]
    assert enc["x"]["field"] == "position j"
    assert enc["y"]["field"] == "position i"
    assert enc["color"]["field"] == "similarity"
    data = rows(spec)
    assert len(data) == 12 * 12
    r = next(d for d in data if d["position i"] == 2 and d["position j"] == 5)
    assert r["similarity"] == pytest.approx(PE[2] @ PE[5])
    assert enc["color"]["scale"]["domain"][1] == pytest.approx(np.abs(PE @ PE.T).max())


def test_titles_fit_a_half_width_chart():
    """#20 item 11: at 1280 px the two heatmaps side by side have ~340 px for a title;
    Vega cut "Positional encoding (position x di…" after 34 characters."""
    for chart in (positional.pe_heatmap(PE.tolist()), positional.pe_similarity(PE.tolist())):
        title = chart.to_dict()["title"]
        assert len(title["text"]) <= 32, title["text"]


@pytest.mark.parametrize("C", [1, 2, 8, 16, 128])
def test_default_dims_are_distinct_valid_and_start_with_the_fastest_pair(C):
    dims = positional.default_dims(C)
    assert dims == sorted(set(dims)) and all(0 <= d < C for d in dims)
    assert dims[: min(C, 2)] == list(range(min(C, 2)))  # sin/cos of the fastest frequency
    if C >= 16:
        assert {C // 8, C // 4, C // 2} <= set(dims)
