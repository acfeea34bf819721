"""Server-side cost of every view of the visualizer page, without Streamlit.

Mirrors the view modules of ``ui/views.py``'s registry at their defaults (layer 0,
head 0, the last query and position): each view's figures are built with the
real ``viz/`` builders from one sentence's arrays and serialized the way
Streamlit ships them to the browser:

* plotly (``ui.figures.plot``): the plain spec through ``viz.spec.wire`` (typed
  arrays) and ``plotly.io.to_json(spec, validate=False)``, as Streamlit encodes it;
* altair (``ui.figures.vega_lite``): ``viz.spec.vega_lite(chart)`` (the Vega-Lite
  spec with every DataFrame as Arrow IPC bytes) and the spec's JSON;
* tables (``st.dataframe``): the DataFrame as Arrow IPC bytes.

Widgets, markdown and the download buttons (encoded only on click) are not timed.
Work cached once per server (positional encoding, induction probe, the vocabulary,
the charts of the encoding alone) is done before timing, as in the app; the other shipped model's analysis of the same new
sentence (compare view, and the recurrent panel of the mask view for a softmax
model) is timed, once.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.io

from inference.analysis import Analysis, analyze, with_recurrent
from inference.block import block_numbers, block_outputs, has_block_outputs
from inference.predictions import top_next_columns
from inference.runtime import OnnxModel
from models import contract
from viz import attention as va
from viz import block as vb
from viz import grid as vg
from viz import mask as vm
from viz import positional as vp
from viz import shape_flow as vflow
from viz import shapes as vs
from viz import spec as vspec
from viz import tensors as vt
from viz.views import default_dims

VIEWS = ("attention", "compare", "shapes", "positional", "mask", "block", "predict", "stats")


def plotly_payload(spec: dict) -> str:
    """The JSON string ``ui.figures.plot`` has Streamlit put in its message for ``spec``."""
    return plotly.io.to_json(vspec.wire(spec), validate=False)


arrow_bytes = vspec.arrow_bytes  # a DataFrame as Streamlit sends it (Arrow IPC bytes)


def altair_payload(chart) -> str:
    """The Vega-Lite spec ``ui.figures.vega_lite`` sends (JSON; datasets as Arrow)."""
    spec = vspec.vega_lite(chart)
    datasets = spec.pop("datasets")
    return json.dumps(spec) + str(sum(len(b) for b in datasets.values()))


@dataclass
class Page:
    """One sentence on one model, and what the app caches per server.

    Attributes:
        kind: ``softmax`` or ``linear`` (the selected model).
        models: both shipped models, kind -> ``OnnxModel``.
        result: this model's ``Analysis`` of the sentence (``attn`` (L, H, T, T), ...).
        table: its head-statistics table (``head_table``), or None when T < 2.
        pos_enc: (P, C) positional encoding (cached once per model in the app).
        vocab: kind -> token string of every id (cached once per model in the app).
        other: the other shipped model's ``Analysis`` of the sentence, filled in (and
            timed) by the first view that needs it.
    """

    kind: str
    models: dict[str, OnnxModel]
    result: Analysis
    table: pd.DataFrame | None
    pos_enc: np.ndarray
    vocab: dict[str, list[str]]
    other: Analysis | None = None

    @property
    def other_kind(self) -> str:
        """The other shipped model's kind."""
        return "linear" if self.kind == "softmax" else "softmax"


Timer = Callable[[str, Callable[[], object]], object]


def _other(page: Page, timer: Timer) -> Analysis:
    """The other shipped model's analysis of the same sentence (timed once)."""
    if page.other is None:
        model, text = page.models[page.other_kind], page.result.text
        page.other = timer("analyze(other model)", lambda: analyze(model, text, recurrent=False))
    return page.other


def _plot(timer: Timer, name: str, builder, *args, **kw) -> None:
    """Time ``builder(*args, **kw)`` (a plotly figure) plus its JSON under ``name``."""
    timer(name, lambda: plotly_payload(builder(*args, **kw)))


def _chart(timer: Timer, name: str, builder, *args, **kw) -> None:
    """Time ``builder(*args, **kw)`` (an altair chart) plus its spec under ``name``."""
    timer(name, lambda: altair_payload(builder(*args, **kw)))


def attention(page: Page, timer: Timer) -> None:
    """View 1: selected head with one query's row under it, every head."""
    attn, tokens, T = page.result.outputs["attn"], page.result.display_tokens, page.result.T
    _plot(timer, "attention_with_row", va.attention_with_row, attn[0, 0], tokens, T - 1)  # (T, T)
    _plot(timer, "head_grid", vg.head_grid, attn, tokens)  # (L, H, T, T)


def compare(page: Page, timer: Timer) -> None:
    """View 2: both shipped models' selected head on the same sentence, and their top token."""
    pairs = {page.kind: page.result, page.other_kind: _other(page, timer)}
    for res in pairs.values():
        w = res.outputs["attn"][0, 0]  # (T, T)
        _plot(timer, "attention_heatmap x2", va.attention_heatmap, w, res.display_tokens)


def shapes(page: Page, timer: Timer) -> None:
    """View 3: the reshape table and Q of the selected head."""
    cfg, res = page.models[page.kind].config, page.result
    stages = vs.reshape_stages(
        1, res.T, cfg.d_model, cfg.n_head, cfg.d_head, cfg.attention, cfg.attn_eps
    )
    _plot(timer, "shape_flow_figure", vflow.shape_flow_figure, stages)
    q = res.outputs["q"][0, 0]  # (T, d_head)
    labels = (res.display_tokens, None, "q", "d_head dimension", "token")
    _plot(timer, "matrix_heatmap", vt.matrix_heatmap, q, *labels)


def positional(page: Page, timer: Timer) -> None:
    """View 4: encoding curves (default dimensions); the PE matrix and its similarity
    depend on the model only (cached once per server in the app: not timed)."""
    pe, cfg = page.pos_enc, page.models[page.kind].config  # pe: (P, C)
    sin, length = cfg.position_scheme == "sinusoidal", page.result.T
    dims = default_dims(pe.shape[1])
    _chart(timer, "pe_curves", vp.pe_curves, pe, dims, sin, sentence_length=length)


def mask(page: Page, timer: Timer) -> None:
    """View 5: the three causal-mask panels, and the linear model's state, z and y at the end."""
    out, cfg = page.result.outputs, page.models[page.kind].config
    scores, weights = out["scores"][0, 0], out["attn"][0, 0]  # (T, T) each
    tokens, kind = page.result.display_tokens, cfg.attention
    _plot(
        timer,
        "causal_mask_panels",
        vm.causal_mask_panels,
        scores,
        weights,
        tokens,
        kind,
        cfg.attn_eps,
    )
    lin_kind = page.kind if page.kind == "linear" else page.other_kind
    base = page.result if page.kind == "linear" else _other(page, timer)
    model = page.models[lin_kind]
    lin = timer("with_recurrent (step graph)", lambda: with_recurrent(model, base))
    rec, i = lin.recurrent, lin.T - 1
    S = rec["state"][0, 0, i]  # (D, D)
    _plot(timer, "matrix_heatmap", vt.matrix_heatmap, S, None, None, "S", "value", "key")
    for name in ("normalizer", "y"):
        _plot(timer, "vector_bar x2", vt.vector_bar, rec[name][0, 0, i])  # (D,)


def block(page: Page, timer: Timer) -> None:
    """The block view: layer 0's block outputs (one inspect run), the contributions bars,
    the last token's in + attention + MLP = out and the block diagram (``ui.block_view``)."""
    model, res = page.models[page.kind], page.result
    if not has_block_outputs(model):
        return
    nums = timer("block_outputs", lambda: block_numbers(block_outputs(model, res.ids, 0)))
    t, cfg = res.T - 1, model.config
    _plot(timer, "contributions_figure", vb.contributions_figure, nums.norms,
          res.display_tokens, t, 0)  # fmt: skip
    _plot(timer, "token_sum_figure", vb.token_sum_figure, nums.token(t), res.display_tokens[t], 0)
    norms = tuple(float(nums.norms[h][t]) for h in contract.BLOCK_HOOKS)
    stages = vb.block_stages(1, res.T, cfg.d_model, cfg.d_mlp, cfg.n_head, cfg.attention, norms)
    _plot(timer, "shape_flow_figure", vflow.shape_flow_figure, stages)


def predict(page: Page, timer: Timer) -> None:
    """View 6: top-8 bars at the last position and the top-3 table at every position."""
    res, vocab = page.result, page.vocab[page.kind]
    probs = res.probs  # (T, V)
    _plot(timer, "topk_bars", vt.topk_bars, probs[-1], vocab[: probs.shape[1]], k=8)

    def table() -> bytes:
        cols: dict = {"position": list(range(res.T)), "token": res.tokens}
        return arrow_bytes(pd.DataFrame({**cols, **top_next_columns(probs, vocab, 3)}))

    timer("top-3 table", table)


def stats(page: Page, timer: Timer) -> None:
    """View 7: the head-statistics table (computed with the arrays) as Arrow."""
    if page.table is not None:
        timer("head table", lambda: arrow_bytes(page.table.round(3)))


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
