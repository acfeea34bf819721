"""Server-side cost of every view of the visualizer page, without Streamlit.

Mirrors ``ui/views.py`` and ``ui/recurrence.py`` at their defaults (layer 0,
head 0, the last query and position): each view's figures are built with the
real ``viz/`` builders from one sentence's arrays and serialized the way
Streamlit ships them to the browser:

* plotly (``st.plotly_chart``): ``plotly.io.to_json(fig, validate=False)`` after
  ``plotly.tools.return_figure_from_figure_or_data(fig, validate_figure=True)``;
* altair (``st.altair_chart``): ``chart.to_dict()`` with every DataFrame replaced
  by Arrow IPC bytes (Streamlit's own data transformer does the same; no
  5,000-row limit applies, as in the app);
* tables (``st.dataframe``): the DataFrame as Arrow IPC bytes.

Widgets, markdown and the download buttons (encoded only on click) are not timed.
Work cached once per server (positional encoding, induction probe) is done
before timing, as in the app; the other shipped model's analysis of the same new
sentence (compare view, and the recurrent panel of the mask view for a softmax
model) is timed, once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import altair as alt
import numpy as np
import pandas as pd
import plotly.io
import plotly.tools
import pyarrow as pa

from inference.analysis import Analysis, analyze, id_to_token
from inference.runtime import OnnxModel
from viz import attention as va
from viz import positional as vp
from viz import shapes as vs
from viz import tensors as vt
from viz.views import default_dims

VIEWS = ("attention", "compare", "shapes", "positional", "mask", "predict", "stats")


def plotly_payload(fig) -> str:
    """The JSON string ``st.plotly_chart`` puts in its message for ``fig``."""
    figure = plotly.tools.return_figure_from_figure_or_data(fig, validate_figure=True)
    return plotly.io.to_json(figure, validate=False)


def arrow_bytes(frame: pd.DataFrame) -> bytes:
    """``frame`` as Arrow IPC stream bytes (what ``st.dataframe`` sends)."""
    table = pa.Table.from_pandas(frame)
    sink = pa.BufferOutputStream()
    with pa.RecordBatchStreamWriter(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _to_arrow_dataset(data, datasets: dict) -> dict[str, str]:
    """Altair data transformer: store the DataFrame as Arrow bytes, reference it by name."""
    payload = arrow_bytes(data)
    name = f"data-{len(datasets)}"
    datasets[name] = payload
    return {"name": name}


alt.data_transformers.register("bench_arrow", _to_arrow_dataset)


def altair_payload(chart) -> dict:
    """The Vega-Lite spec ``st.altair_chart`` sends: ``to_dict()`` plus Arrow datasets."""
    datasets: dict[str, bytes] = {}
    with alt.theme.enable("none"), alt.data_transformers.enable("bench_arrow", datasets=datasets):
        spec = chart.to_dict()
    spec["datasets"] = datasets
    return spec


@dataclass
class Page:
    """One sentence on one model, and what the app caches per server.

    Attributes:
        kind: ``softmax`` or ``linear`` (the selected model).
        models: both shipped models, kind -> ``OnnxModel``.
        result: this model's ``Analysis`` of the sentence (``attn`` (L, H, T, T), ...).
        table: its head-statistics table (``head_table``), or None when T < 2.
        pos_enc: (P, C) positional encoding (cached once per model in the app).
        other: the other shipped model's ``Analysis`` of the sentence, filled in (and
            timed) by the first view that needs it.
    """

    kind: str
    models: dict[str, OnnxModel]
    result: Analysis
    table: pd.DataFrame | None
    pos_enc: np.ndarray
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
        page.other = timer("analyze(other model)", lambda: analyze(model, text))
    return page.other


def _plot(timer: Timer, name: str, builder, *args, **kw) -> None:
    """Time ``builder(*args, **kw)`` (a plotly figure) plus its JSON under ``name``."""
    timer(name, lambda: plotly_payload(builder(*args, **kw)))


def _chart(timer: Timer, name: str, builder, *args, **kw) -> None:
    """Time ``builder(*args, **kw)`` (an altair chart) plus its spec under ``name``."""
    timer(name, lambda: altair_payload(builder(*args, **kw)))


def attention(page: Page, timer: Timer) -> None:
    """View 1: selected head, one query's row, every head."""
    attn, tokens, T = page.result.outputs["attn"], page.result.display_tokens, page.result.T
    _plot(timer, "attention_heatmap", va.attention_heatmap, attn[0, 0], tokens)  # (T, T)
    _plot(timer, "attention_row", va.attention_row, attn[0, 0, T - 1], tokens, T - 1)  # (T,)
    _plot(timer, "head_grid", va.head_grid, attn, tokens)  # (L, H, T, T)


def compare(page: Page, timer: Timer) -> None:
    """View 2: both shipped models' selected head on the same sentence, and their top token."""
    pairs = {page.kind: page.result, page.other_kind: _other(page, timer)}
    for kind, res in pairs.items():
        w = res.outputs["attn"][0, 0]  # (T, T)
        _plot(timer, "attention_heatmap x2", va.attention_heatmap, w, res.display_tokens)
        timer("id_to_token x2", lambda m=page.models[kind]: id_to_token(m))


def shapes(page: Page, timer: Timer) -> None:
    """View 3: the reshape table and Q of the selected head."""
    cfg, res = page.models[page.kind].config, page.result
    stages = vs.reshape_stages(1, res.T, cfg.d_model, cfg.n_head, cfg.d_head, cfg.attention)
    _plot(timer, "shape_flow_figure", vs.shape_flow_figure, stages)
    q = res.outputs["q"][0, 0]  # (T, d_head)
    labels = (res.display_tokens, None, "q", "d_head dimension", "token")
    _plot(timer, "matrix_heatmap", vt.matrix_heatmap, q, *labels)


def positional(page: Page, timer: Timer) -> None:
    """View 4: encoding curves (default dimensions), the PE matrix and its similarity."""
    pe, cfg = page.pos_enc, page.models[page.kind].config  # pe: (P, C)
    sin, length = cfg.pos_enc == "sinusoidal", min(page.result.T, pe.shape[0])
    dims = default_dims(pe.shape[1])
    _chart(timer, "pe_curves", vp.pe_curves, pe, dims, sin, sentence_length=length)
    _chart(timer, "pe_heatmap", vp.pe_heatmap, pe)
    _chart(timer, "pe_similarity", vp.pe_similarity, pe)


def mask(page: Page, timer: Timer) -> None:
    """View 5: the three causal-mask panels, and the linear model's state, z and y at the end."""
    out, kind = page.result.outputs, page.models[page.kind].config.attention
    scores, weights = out["scores"][0, 0], out["attn"][0, 0]  # (T, T) each
    tokens = page.result.display_tokens
    _plot(timer, "causal_mask_panels", va.causal_mask_panels, scores, weights, tokens, kind)
    lin = page.result if page.result.recurrent is not None else _other(page, timer)
    rec, i = lin.recurrent, lin.T - 1
    S = rec["state"][0, 0, i]  # (D, D)
    _plot(timer, "matrix_heatmap", vt.matrix_heatmap, S, None, None, "S", "value", "key")
    for name in ("normalizer", "y"):
        _plot(timer, "vector_bar x2", vt.vector_bar, rec[name][0, 0, i])  # (D,)


def predict(page: Page, timer: Timer) -> None:
    """View 6: top-8 bars at the last position and the top-3 table at every position."""
    res, model = page.result, page.models[page.kind]
    vocab = timer("id_to_token", lambda: id_to_token(model))
    probs = res.probs  # (T, V)
    _plot(timer, "topk_bars", vt.topk_bars, probs[-1], vocab[: probs.shape[1]], k=8)

    def table() -> bytes:
        top = np.argsort(-probs, axis=1)[:, :3]  # (T, 3)
        cols: dict = {"position": list(range(res.T)), "token": res.tokens}
        for r in range(3):
            cols[f"#{r + 1} next"] = [vocab[int(i)] for i in top[:, r]]
            cols[f"p #{r + 1}"] = [float(probs[t, i]) for t, i in enumerate(top[:, r])]
        return arrow_bytes(pd.DataFrame(cols))

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
