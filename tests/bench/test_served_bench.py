"""The served section's rows (issue #24) render its measurements and judge them."""

from __future__ import annotations

from bench.report import render
from bench.sections.served import served

DATA = {
    "busy_conversion": {"file_mb": 10.0, "loops": 2, "busy_s": 22.0, "idle_s": 16.1,
                        "ratio": 22.0 / 16.1},
    "context": {"parameters": 3_500_000, "from_context": 1024, "context": 256, "seconds": 9.0,
                "file_mb": 14.0, "refusal": ""},
    "memory": {"n": 30, "T": 1024, "max_rss_mb": 2500.0, "opened_mb": 900.0,
               "last20_spread_mb": 50.0, "peak_mb": 4000.0, "median_s": 10.0,
               "rss_mb": [2500.0] * 30},
}  # fmt: skip


def test_the_served_rows_render_and_judge_the_targets():
    rows = served(DATA, {})
    assert [r[3] for r in rows] == ["yes", "yes", "yes"], rows
    text = render({"machine": {}, "served": DATA})
    assert "beside 2 busy-loop process(es)" in text and "`--context 256`" in text
    leaking = [1000.0 + 100 * i for i in range(30)]  # 100 MB a sentence, under 3 GB
    grown = {**DATA, "memory": {**DATA["memory"], "rss_mb": leaking, "max_rss_mb": 2900.0}}
    assert served(grown, {})[2][3] == "**no**"  # not flat
    spike = [2100.0] * 25 + [2700.0] + [2100.0] * 4  # one sentence's transient
    assert served({**DATA, "memory": {**DATA["memory"], "rss_mb": spike}}, {})[2][3] == "yes"
    quick = {**DATA, "memory": {**DATA["memory"], "n": 3, "rss_mb": [500.0, 510.0, 505.0]}}
    assert "3 different sentences" in served(quick, {})[2][0]  # a --quick run renders
    refused = {**DATA, "context": {**DATA["context"], "refusal": "too large"}}
    assert served(refused, {})[1][3] == "**no**"
