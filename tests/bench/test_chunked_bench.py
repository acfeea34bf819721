"""The before/after rows of the chunked linear fast graph (``bench/chunked.py``) at a tiny
size: the prefix-state graph exported at bench time, fresh-process peaks, alternating
times, equal logits, three rendered rows (no timing or memory asserts)."""

from __future__ import annotations

import onnx
import pytest

from bench.chunked import compare
from bench.common import shipped
from bench.sections.speed import chunked, scaling_notes
from export.checks import tensor_sizes
from models import contract


@pytest.mark.slow
def test_chunked_before_after_rows(tiny_folder, tmp_path):
    """One export of the before graph (~10 s): it holds a state per token,
    (1, H, T, d_head, d_head), which the shipped chunked graph does not; the logits agree."""
    model = shipped("linear", tiny_folder)
    out = compare(model, tiny_folder, tmp_path, T=70, rounds=2, starts=1)
    assert out["before_graph"] == "the prefix-state form, exported at bench time"
    for side in ("before", "after"):
        assert len(out[side]["peak_mb"]) == len(out[side]["default_malloc_peak_mb"]) == 1
        assert out[side]["n"] == 2
    assert out["max_abs_diff"] <= 1e-5 * out["max_abs_logit"]
    rows = chunked({"chunked": out})
    names = [r[0].rsplit(": ", 1)[1] for r in rows]
    assert names == [
        "peak extra memory",
        "peak RSS growth, glibc malloc defaults",
        "time",
        "logits",
    ]
    assert rows[3][3] == "yes" and not any("|" in cell for row in rows for cell in row)
    assert "fresh process per graph" in scaling_notes({"chunked": out})[0]
    cfg = model.config
    per_token = cfg.n_head * 194 * cfg.d_head**2
    after = tiny_folder / contract.graph_file("linear", "fast")
    for graph, has in ((tmp_path / "prefix_states.onnx", True), (after, False)):
        sizes = tensor_sizes(onnx.load(str(graph)), (97, 194))
        assert (max(b for _, b in sizes.values()) >= per_token) == has, graph
