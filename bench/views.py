"""Server-side cost of every view of the visualizer page, without Streamlit.

Each view's figures at its defaults (layer 0, head 0, the last query and position) are
built by the app's own builders (``inference.view_specs``, which ``ui/specs.py`` caches)
from one sentence's analysis, and serialized the way Streamlit ships them to the browser:

* plotly: the plain spec through ``viz.spec.wire`` (typed arrays) and
  ``plotly.io.to_json(spec, validate=False)``, as Streamlit encodes it;
* Vega-Lite (the positional view): the spec's JSON, its datasets as Arrow IPC bytes;
* tables (``st.dataframe``): the Arrow table as IPC bytes.

Widgets, markdown and the download buttons (encoded only on click) are not timed.
Work cached once per server (positional encoding, induction probe, the vocabulary:
:class:`Facts`) is done before timing, as in the app; the other shipped model's analysis
of the same new sentence (compare view, and the recurrent panel of the mask view for a
softmax model) is timed, once.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import plotly.io
import pyarrow as pa

from inference import view_specs as figs
from inference.analysis import (
    Analysis,
    analyze,
    induction_probe,
    positional_encoding,
    with_recurrent,
)
from inference.block import block_numbers, block_outputs, has_block_outputs
from inference.predictions import id_to_token
from inference.runtime import OnnxModel
from models.config import ModelConfig
from viz import spec as vspec
from viz.views import default_dims

VIEWS = ("attention", "compare", "shapes", "positional", "mask", "block", "predict", "stats")


def plotly_payload(spec: dict) -> str:
    """The JSON string ``ui.figures.plot`` has Streamlit put in its message for ``spec``."""
    return plotly.io.to_json(vspec.wire(spec), validate=False)


def vega_lite_payload(spec: dict) -> int:
    """Characters of the spec's JSON plus bytes of its Arrow datasets, as
    ``ui.figures.vega_lite`` sends them."""
    rest = {k: v for k, v in spec.items() if k != "datasets"}
    return len(json.dumps(rest)) + sum(len(b) for b in spec.get("datasets", {}).values())


def table_payload(table: pa.Table | None) -> bytes:
    """An Arrow table as Streamlit sends a dataframe (IPC stream bytes); b"" for None."""
    if table is None:
        return b""
    sink = pa.BufferOutputStream()
    with pa.RecordBatchStreamWriter(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


@dataclass
class Facts:
    """:class:`inference.view_specs.ModelFacts` of a bench model, computed once (the app
    caches the same per server): vocabulary (V,), positional encoding (P, C) and the
    induction probe's scores (L, H)."""

    name: str
    config: ModelConfig
    vocab: list[str]
    pos_enc: np.ndarray
    induction: np.ndarray | None

    @classmethod
    def of(cls, name: str, model: OnnxModel) -> Facts:
        return cls(name, model.config, id_to_token(model), positional_encoding(model),
                   induction_probe(model))  # fmt: skip


@dataclass
class Page:
    """One sentence on one model, and what the app caches per server.

    Attributes:
        kind: the selected model's key in ``models``.
        models: the shipped models, kind -> ``OnnxModel`` (two or more: the compare view).
        result: this model's ``Analysis`` of the sentence (``attn`` (L, H, T, T), ...).
        facts: kind -> :class:`Facts`.
        other: the other model's ``Analysis`` of the sentence, filled in (and timed) by
            the first view that needs it.
    """

    kind: str
    models: dict[str, OnnxModel]
    result: Analysis
    facts: dict[str, Facts]
    other: Analysis | None = None

    @property
    def other_kind(self) -> str:
        """The model beside this one in the compare view (``ui.compare.PARTNER``'s pairs)."""
        partner = {"softmax": "linear", "linear": "softmax", "delta": "linear"}.get(self.kind)
        return partner if partner in self.models else next(k for k in self.models if k != self.kind)


Timer = Callable[[str, Callable[[], object]], object]


def _other(page: Page, timer: Timer) -> Analysis:
    """The other shipped model's analysis of the same sentence (timed once)."""
    if page.other is None:
        model, text = page.models[page.other_kind], page.result.text
        page.other = timer("analyze(other model)", lambda: analyze(model, text, recurrent=False))
    return page.other


def _plot(timer: Timer, name: str, builder, *args) -> None:
    """Time ``builder(*args)`` (a plotly spec) plus its JSON under ``name``."""
    timer(name, lambda: plotly_payload(builder(*args)))


def attention(page: Page, timer: Timer) -> None:
    """View 1: selected head with one query's row under it, every head."""
    facts, res = page.facts[page.kind], page.result
    _plot(timer, "attention_with_row", figs.attention, facts, res, 0, 0, "selected head", res.T - 1)
    _plot(timer, "head_grid", figs.head_grid, facts, res)


def compare(page: Page, timer: Timer) -> None:
    """View 2: both shipped models' selected head on the same sentence."""
    for kind, res in ((page.kind, page.result), (page.other_kind, _other(page, timer))):
        _plot(timer, "attention_heatmap x2", figs.compare, page.facts[kind], res, 0, 0)


def shapes(page: Page, timer: Timer) -> None:
    """View 3: the reshape flow and Q of the selected head."""
    facts, res = page.facts[page.kind], page.result
    _plot(timer, "shape_flow_figure", figs.shape_flow, facts, res, 0)
    _plot(timer, "matrix_heatmap", figs.qkv, facts, res, 0, 0, "q")


def positional(page: Page, timer: Timer) -> None:
    """View 4: encoding curves (default dimensions); the PE matrix and its similarity
    depend on the model only (cached once per server in the app: not timed)."""
    facts, res = page.facts[page.kind], page.result
    dims = default_dims(facts.pos_enc.shape[1])
    timer("pe_curves", lambda: vega_lite_payload(figs.pe_curves(facts, res, dims, res.T)))


def mask(page: Page, timer: Timer) -> None:
    """View 5: the three causal-mask panels, and the linear model's state, z and y at the end."""
    _plot(timer, "causal_mask_panels", figs.mask_panels, page.facts[page.kind], page.result, 0, 0)
    base = page.result if page.kind == "linear" else _other_linear(page, timer)
    model, facts = page.models["linear"], page.facts["linear"]
    lin = timer("with_recurrent (step graph)", lambda: with_recurrent(model, base))
    i = lin.T - 1
    _plot(timer, "matrix_heatmap", figs.recurrent_state, facts, lin, 0, 0, i)
    for which in ("normalizer", "y"):
        _plot(timer, "vector_bar x2", figs.recurrent_vector, facts, lin, 0, 0, i, which)


def _other_linear(page: Page, timer: Timer) -> Analysis:
    """The linear model's analysis of the sentence (the mask view's recurrent panel)."""
    if page.other_kind == "linear":
        return _other(page, timer)
    model, text = page.models["linear"], page.result.text
    return timer("analyze(linear model)", lambda: analyze(model, text, recurrent=False))


def block(page: Page, timer: Timer) -> None:
    """The block view: layer 0's block outputs (one inspect run), the contributions bars,
    the last token's in + attention + MLP = out and the block diagram (``ui.block_view``)."""
    model, res, facts = page.models[page.kind], page.result, page.facts[page.kind]
    if not has_block_outputs(model):
        return
    nums = timer("block_outputs", lambda: block_numbers(block_outputs(model, res.ids, 0)))
    t = res.T - 1
    _plot(timer, "contributions_figure", figs.block_contributions, res, nums, 0, t)
    _plot(timer, "token_sum_figure", figs.block_token_sum, res, nums, 0, t)
    _plot(timer, "shape_flow_figure", figs.block_flow, facts, res, nums, 0, t)


def predict(page: Page, timer: Timer) -> None:
    """View 6: top-8 bars at the last position and the top-3 table at every position."""
    facts, res = page.facts[page.kind], page.result
    _plot(timer, "topk_bars", figs.top_k, facts, res, res.T - 1)
    timer("top-3 table", lambda: table_payload(figs.top_next(facts, res, 3)))


def stats(page: Page, timer: Timer) -> None:
    """View 7: the head-statistics table (``head_table`` of the arrays) as Arrow."""
    facts, res = page.facts[page.kind], page.result
    timer("head table", lambda: table_payload(figs.head_stats(facts, res)))


BUILDERS = {
    "attention": attention,
    "compare": compare,
    "shapes": shapes,
    "positional": positional,
    "mask": mask,
    "block": block,
    "predict": predict,
    "stats": stats,
}


def build_all(page: Page) -> dict[str, float]:
    """Build and serialize every view once.

    Returns:
        ``"view: item" -> milliseconds`` (items that repeat within a view are summed).
    """
    ms: dict[str, float] = {}
    for view, build in BUILDERS.items():

        def timer(name: str, fn: Callable[[], object], view: str = view) -> object:
            start = time.perf_counter()
            value = fn()
            key = f"{view}: {name}"
            ms[key] = ms.get(key, 0.0) + (time.perf_counter() - start) * 1e3
            return value

        build(page, timer)
    return ms
