"""The multi-head reshape pipeline."""

from __future__ import annotations

import plotly.graph_objects as go
import pytest

from viz import shapes


def test_softmax_stages():
    stages = shapes.reshape_stages(1, 5, 64, 4, 16)
    got = [s["shape"] for s in stages]
    assert got[0] == (1, 5, 64)
    assert (1, 5, 4, 16) in got
    assert (1, 4, 5, 16) in got
    assert (1, 4, 5, 5) in got
    assert got[-1] == (1, 5, 64)
    assert all(set(s) == {"step", "op", "shape", "note"} for s in stages)
    assert any("softmax" in s["op"] for s in stages)


def test_linear_stages_have_state_not_t_by_t():
    stages = shapes.reshape_stages(2, 7, 32, 2, attention="linear")  # D defaults to 16
    got = [s["shape"] for s in stages]
    assert (2, 2, 16, 16) in got  # state
    assert (2, 2, 7, 7) not in got
    assert any("φ" in s["op"] for s in stages)


def test_errors():
    with pytest.raises(ValueError):
        shapes.reshape_stages(1, 5, 64, 3, 16)
    with pytest.raises(ValueError):
        shapes.reshape_stages(1, 0, 64, 4, 16)
    with pytest.raises(ValueError):
        shapes.reshape_stages(1, 5, 64, 4, 16, attention="flash")


def test_shape_flow_figure():
    stages = shapes.reshape_stages(1, 5, 64, 4, 16)
    fig = shapes.shape_flow_figure(stages)
    (table,) = fig.data
    assert isinstance(table, go.Table)
    cells = table.cells.values
    assert len(cells) == 4 and len(cells[0]) == len(stages)
    assert "(1, 4, 5, 5)" in cells[2]
    assert fig.layout.font.size >= 16
