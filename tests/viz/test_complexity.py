"""#20 item 3: the complexity figures are readable on a projector: few, full-size tick
labels (plotly's own log ticks add ~6 px minor labels), one SI style, data inside the
labelled range."""

from __future__ import annotations

import math
import re

import pytest

from viz import complexity as vc
from viz import style

T = [64, 128, 256, 512, 1024, 2048]
SCALING = {
    "softmax": {"T": T, "median_ms": [0.5, 0.9, 2, 5, 14, 45], "peak_mb": [2, 3, 7, 20, 77, 238]},
    "linear": {"T": T, "median_ms": [0.4, 0.8, 1.5, 3, 6, 12], "peak_mb": [3, 6, 12, 24, 57, 96]},
    "target_ratio": 5.0,
}
LENGTHS = [16, 32, 64, 128, 256, 512, 1024, 1152]
CARRIED = {
    "length": LENGTHS,
    "state_bytes": [4e5] * 8,
    "kv_cache_bytes": [1e4 * n for n in LENGTHS],
}
GENERATION = {
    "linear_recurrent": {"curve": {"length": LENGTHS, "tokens_per_s": [900.0] * 8}},
    "softmax_recompute": {"curve": {"length": LENGTHS, "tokens_per_s": [2e4 / n for n in LENGTHS]}},
}


@pytest.mark.parametrize(
    "fig",
    [
        vc.scaling_time(SCALING),
        vc.scaling_memory(SCALING),
        vc.carried_memory(CARRIED),
        vc.generation_speed(GENERATION),
    ],
    ids=["time", "memory", "carried", "generation"],
)
def test_log_axes_have_few_full_size_labels(fig):
    layout = fig.to_plotly_json()["layout"]
    ys = [y for t in fig.data for y in t.y]
    for name in ("xaxis", "yaxis"):
        axis = layout[name]
        assert axis["type"] == "log" and axis["tickmode"] == "array"
        assert 2 <= len(axis["tickvals"]) <= vc.MAX_TICKS
        assert axis["tickfont"]["size"] >= style.TICK_SIZE >= 16
        assert axis["title"]["font"]["size"] >= 16
        for text in axis["ticktext"]:  # 0.3, 20, 1000, 20k, 5M: no 1e+06, no µ
            assert re.fullmatch(r"\d+(\.\d+)?[kMG]?", text), text
    low, high = layout["yaxis"]["range"]
    assert all(low - 1e-9 <= math.log10(y) <= high + 1e-9 for y in ys)
    assert layout["legend"]["font"]["size"] >= 16 and layout["title"]["font"]["size"] >= 20


def test_time_axis_is_labelled_at_the_lengths_measured():
    layout = vc.scaling_time(SCALING).to_plotly_json()["layout"]
    assert layout["xaxis"]["tickvals"] == T
    assert layout["xaxis"]["ticktext"] == [str(t) for t in T]


def test_tick_text_uses_one_si_style():
    assert [vc.tick_text(v) for v in (0.3, 20, 1000, 2e4, 5e6, 1e9)] == [
        "0.3", "20", "1000", "20k", "5M", "1G"
    ]  # fmt: skip


def test_lengths_that_do_not_double_get_round_ticks():
    """Generation lengths 15, 39, …, 128, 135: ticks at the measured values overlapped
    (128 beside 135); then the axis is labelled at round values instead."""
    layout = vc.carried_memory(CARRIED).to_plotly_json()["layout"]
    ticks = layout["xaxis"]["tickvals"]
    assert 1152 not in ticks and all(b >= 2 * a for a, b in zip(ticks, ticks[1:], strict=False))
    assert layout["title"]["pad"]["t"] >= 30  # under plotly's toolbar (~30 px)
