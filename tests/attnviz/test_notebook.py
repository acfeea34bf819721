"""The example notebook (docs/notebook.ipynb) executes offline in a real kernel (nbclient,
ipykernel) and its figure's numbers equal the app's (issue #48 item 2)."""

from __future__ import annotations

import re

import nbformat
import pytest
from nbclient import NotebookClient

from tests.helpers import ROOT

NOTEBOOK = ROOT / "docs" / "notebook.ipynb"
pytestmark = pytest.mark.slow  # a kernel started and a notebook run: about 5 s


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """The notebook after a run of every cell, in a kernel that sees this tree (as an
    installed package does) and whose cache is a temporary folder."""
    mp = pytest.MonkeyPatch()
    mp.setenv("PYTHONPATH", str(ROOT))
    mp.setenv("ATTNVIZ_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    try:
        nb = nbformat.read(NOTEBOOK, as_version=4)
        NotebookClient(nb, timeout=300, kernel_name="python3",
                       resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()  # fmt: skip
    finally:
        mp.undo()
    return nb


def _outputs(nb) -> list:
    return [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]


def _text(nb) -> str:
    return "".join(o.get("text", "") for o in _outputs(nb) if o.output_type == "stream")


def test_every_cell_ran_without_an_error(executed):
    code = [c for c in executed.cells if c.cell_type == "code"]
    assert code and all(c.execution_count for c in code)
    assert not [o for o in _outputs(executed) if o.output_type == "error"]


def test_its_figure_equals_the_apps(executed):
    assert "the figure's weights equal the app's: True" in _text(executed)


def test_figures_are_drawn_with_plotly_js_inlined_and_nothing_fetched(executed):
    html = [o.data["text/html"] for o in _outputs(executed)
            if o.output_type == "display_data" and "text/html" in o.get("data", {})]  # fmt: skip
    assert len(html) >= 5  # attention, head grid, q, top-k, ablation, lens
    for page in html:
        assert "* plotly.js v" in page  # the library itself, in the output
        scripts = re.findall(r"<script\b[^>]*>", page)
        assert scripts and not [s for s in scripts if "src" in s]
        assert "Plotly.newPlot" in page


def test_the_named_arrays_have_their_shapes(executed):
    text = _text(executed)
    assert "(16, 16) rows sum to [1. 1. 1." in text
    shapes = next(o.data["text/plain"] for o in _outputs(executed)
                  if o.output_type == "execute_result" and "'attn'" in o.data["text/plain"])  # fmt: skip
    for name, shape in (("attn", "(3, 4, 16, 16)"), ("q", "(3, 4, 16, 32)"),
                        ("residual", "(4, 16, 128)"), ("logits", "(16, 2192)")):  # fmt: skip
        assert f"'{name}': {shape}" in shapes


def test_the_altair_chart_is_drawn_with_vega_inlined(executed):
    charts = [o.data["text/html"] for o in _outputs(executed)
              if "text/html" in o.get("data", {}) and "vega-embed" in o.data["text/html"]]  # fmt: skip
    assert len(charts) == 1
    scripts = re.findall(r"<script\b[^>]*>", charts[0])
    assert scripts and not [s for s in scripts if "src" in s]
    assert "cdn.jsdelivr" not in charts[0] and '"$schema"' in charts[0]
