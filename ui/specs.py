"""Figure specs of the visualizer's views, computed once for everyone.

A rerun builds only the figures on screen, and for the shipped models each one
only once per server: specs are cached across sessions (``ui.shared.SharedCache``
held by ``st.cache_resource``), keyed by the figure, the model key, the sentence and
the view's own parameters (layer, head, mode, query token, ...), so thirty students
clicking through the heads of the teacher's sentence share one computation per
head. The cached value is the spec as it goes to the browser (``viz.spec.wire``:
plain JSON, typed arrays), shared by every session: never modified.

An uploaded model's specs never enter a cross-session cache: they are kept in its
own session (the last ``UPLOAD_SPECS`` of them, at most ``UPLOAD_SPEC_BYTES`` in all
but the newest, in ``loaders.UPLOAD_CACHE``, which a new upload empties). The server operator's models (``ui/served.py``) share theirs like
the shipped models, in caches bounded by bytes (a heatmap at T = 1024 is megabytes).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import streamlit as st

from inference.analysis import Analysis, head_scores, head_table
from inference.memory import release_freed
from inference.predictions import top_next_columns
from inference.text_input import visible
from ui import loaders, served
from ui.shared import SharedCache
from viz import attention as va
from viz import fit, style
from viz import grid as vg
from viz import mask as vm
from viz import positional as vp
from viz import shape_flow as vflow
from viz import shapes as vs
from viz import spec as vspec
from viz import tensors as vt

Builder = Callable[..., dict]
UPLOAD_SPECS = 64  # specs an upload's session keeps
UPLOAD_SPEC_BYTES = 32 * 2**20  # and their bytes in all (a heatmap at T = 2,000: ~20 MB)


def _weights(result: Analysis, layer: int, head: int | None, mode: str) -> tuple:
    """(T, T) weights and title of the attention view's big heatmap (``head`` is
    None for the mean and the max over heads)."""
    attn = result.outputs["attn"]  # (L, H, T, T)
    if mode == "selected head":
        return attn[layer, head], f"Layer {layer}, head {head}"
    reduce = attn[layer].mean if mode == "mean over heads" else attn[layer].max
    return reduce(0), f"Layer {layer}, {mode.split()[0]} over {attn.shape[1]} heads"


def head_weights(result: Analysis, layer: int, head: int | None, mode: str) -> np.ndarray:
    """The (T, T) weights :func:`attention` draws."""
    return _weights(result, layer, head, mode)[0]


def attention(name, result, layer, head, mode, query) -> dict:
    """The attention view's heatmap (one head, or the mean or max over heads) with
    query ``query``'s row as bars underneath."""
    weights, title = _weights(result, layer, head, mode)
    return va.attention_with_row(weights, result.display_tokens, query, title=title)


def head_grid(name, result) -> dict:
    """Every layer and head of the sentence as small multiples."""
    return vg.head_grid(result.outputs["attn"], result.display_tokens)


def compare(name, result, layer, head) -> dict:
    """One head of model ``name`` for the side-by-side comparison."""
    w = result.outputs["attn"][layer, head]  # (T, T)
    width = fit.HALF_1280_PX if side_by_side(result.T) else fit.FULL_1280_PX
    title = f"{name}: L{layer} H{head}"
    return va.attention_heatmap(w, result.display_tokens, title=title, width_px=width)


def side_by_side(t: int) -> bool:
    """Whether two heatmaps of t tokens go side by side (else one above the other):
    then each still labels every token at a 1280 px window."""
    return t <= fit.SIDE_BY_SIDE_MAX


def shape_flow(name, result, layer) -> dict:
    """The multi-head reshape of ``layer`` as a flow of boxes with this model's sizes."""
    cfg = loaders.get_model(name).config
    stages = vs.reshape_stages(
        1, result.T, cfg.d_model, cfg.n_head, cfg.d_head, attention=cfg.attention, eps=cfg.attn_eps,
        layer=layer,
    )  # fmt: skip
    title = (
        f"Multi-head reshape of layer {layer}: B=1, T={result.T}, d_model={cfg.d_model}, "
        f"H={cfg.n_head}, d_head={cfg.d_head}"
    )
    return vflow.shape_flow_figure(stages, title=title)


def qkv(name, result, layer, head, which) -> dict:
    """``q``, ``k``, ``v`` or ``head_out`` (T, d_head) of one head."""
    matrix = result.outputs[which][layer, head]  # (T, d_head)
    title = f"{which} of layer {layer}, head {head}: shape {matrix.shape}"
    return vt.matrix_heatmap(
        matrix, result.display_tokens, None, title, "d_head dimension", "token"
    )


def mask_panels(name, result, layer, head) -> dict:
    """Scores, causal mask and weights of one head."""
    out, cfg = result.outputs, loaders.get_model(name).config
    return vm.causal_mask_panels(
        head_scores(result, layer, head),  # (T, T)
        out["attn"][layer, head],
        result.display_tokens,
        cfg.attention,
        cfg.attn_eps,
    )


def softmax_input_panels(name, result, layer, head) -> dict:
    """What one head's Softmax receives (mask included), the mask as measured and the
    weights: a foreign ONNX graph's mask view."""
    out = result.outputs
    return vm.softmax_input_panels(
        out["masked_scores"][layer, head], out["attn"][layer, head], result.display_tokens
    )


def recurrent_state(name, result, layer, head, i) -> dict:
    """The state S_i (d_head, d_head) of one head of a linear model after token i."""
    S = result.recurrent["state"][layer, head, i]  # (d_head, d_head)
    return vt.matrix_heatmap(S, None, None, f"State S_{i}", "value dim", "key feature dim")


def recurrent_vector(name, result, layer, head, i, which) -> dict:
    """The normalizer z_i or the output y_i (d_head,) after token i."""
    title = {"normalizer": f"Normalizer z_{i}", "y": f"Output y_{i}"}[which]
    return vt.vector_bar(result.recurrent[which][layer, head, i], title=title)  # (d_head,)


def top_k(name, result, pos) -> dict:
    """The 8 most likely next tokens after position ``pos``."""
    vocab = loaders.get_vocab(name)
    title = f"Next token after “{style.escape(visible(result.tokens[pos]))}”"
    return vt.topk_bars(result.probs[pos], vocab[: result.probs.shape[1]], k=8, title=title)


def pe_curves(name, result, dims, length) -> dict:
    """Encoding curves of dimensions ``dims``, the sentence's end marked (Vega-Lite)."""
    pe = loaders.get_pos_enc(name)  # (P, C)
    sinusoidal = loaders.get_model(name).config.position_scheme == "sinusoidal"
    return vspec.vega_lite(vp.pe_curves(pe, list(dims), sinusoidal, sentence_length=length))


def pe_heatmap(name, result) -> dict:
    """The whole positional encoding (P, C) (Vega-Lite)."""
    return vspec.vega_lite(vp.pe_heatmap(loaders.get_pos_enc(name)))


def pe_similarity(name, result) -> dict:
    """Dot products of every two positions' encodings (Vega-Lite)."""
    return vspec.vega_lite(vp.pe_similarity(loaders.get_pos_enc(name)))


def top_next(name, result, k) -> pa.Table:
    """The ``k`` most likely next tokens and their probabilities at every position
    (T rows: position, token, #1 next, p #1, ...)."""
    table = {"position": list(range(result.T)), "token": [visible(t) for t in result.tokens]}
    return pa.table({**table, **top_next_columns(result.probs, loaders.get_vocab(name), k)})


def head_stats(name, result) -> pa.Table | None:
    """Per-head statistics of the sentence and the induction scores, rounded to 3
    decimals (L*H rows); None for a one-token sentence."""
    signed = loaders.get_model(name).config.attention == "delta"  # implied weights: signed
    table = head_table(result, loaders.get_induction(name), signed=signed)
    return None if table is None else pa.Table.from_pandas(table.round(3), preserve_index=False)


# Figures of one sentence (or of the model only: ``MODEL_ONLY``) are few and can be
# large (the head grid is L*H heatmaps); per-head figures are many and small.
PER_SENTENCE = {head_grid, shape_flow, top_next, head_stats}
MODEL_ONLY = {pe_curves, pe_heatmap, pe_similarity}


# Sizes at T = 64 (JSON): a head's heatmap 24 kB, its row 3 kB, the mask panels 60 kB, a
# head grid 290 kB. At most 256 x 0.06 + 48 x 0.29 = 30 MB; a class on the attention view
# (2 models, 12 heads, a sentence each) uses a few MB. An upload's, in its session, at
# T = 256: a head's heatmap 0.37 MB, the mask panels 0.82 MB, the grid (an overview) at
# most 0.9 MB; at T = 1024: 5.8 MB, 13 MB and 0.9 MB.
PER_HEAD_ENTRIES, PER_SENTENCE_ENTRIES = 256, 48


def spec_bytes(value: object) -> int:
    """About how many bytes a wired spec or an Arrow table holds: strings and bytes by
    their length, other leaves 8 bytes, containers the sum of their items."""
    if isinstance(value, pa.Table):
        return value.nbytes
    if isinstance(value, str | bytes):
        return len(value)
    if isinstance(value, dict):
        return sum(len(k) + spec_bytes(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        if value and all(type(v) is str for v in value):
            return sum(map(len, value)) + 8 * len(value)
        return sum(spec_bytes(v) for v in value)
    return 8


@st.cache_resource(show_spinner=False)
def shared() -> dict[str, SharedCache]:
    """This server's figure specs of the shipped models, for every session, and of the
    served models (bounded by bytes: ``served.FIGURE_CACHE_BYTES``)."""
    budget = served.FIGURE_CACHE_BYTES // 2
    return {
        "per_head": SharedCache(PER_HEAD_ENTRIES),
        "per_sentence": SharedCache(PER_SENTENCE_ENTRIES),
        "served_per_head": SharedCache(
            4096, max_bytes=budget, size=spec_bytes, on_evict=release_freed
        ),
        "served_per_sentence": SharedCache(
            1024, max_bytes=budget, size=spec_bytes, on_evict=release_freed
        ),
    }


def _kept(build: Builder, name: str, result: Analysis, params: tuple, finish) -> object:
    """``finish(build(name, result, *params))``, kept as :func:`get` says."""
    params = tuple(tuple(p) if isinstance(p, list) else p for p in params)
    text = "" if build in MODEL_ONLY else result.text
    key = (build.__name__, name, text, params)
    if loaders.is_shared(name):
        kind = "per_sentence" if build in PER_SENTENCE | MODEL_ONLY else "per_head"
        cache = shared()[kind if name in loaders.SHIPPED_KINDS else f"served_{kind}"]
        return cache.get(key, lambda: finish(build(name, result, *params)))
    mine = st.session_state.setdefault(loaders.UPLOAD_CACHE, {})
    specs = mine.setdefault("specs", OrderedDict())
    sizes = mine.setdefault("spec_bytes", {})
    if key not in specs:
        specs[key] = value = finish(build(name, result, *params))
        sizes[key] = spec_bytes(value)
        while len(specs) > 1 and (
            len(specs) > UPLOAD_SPECS or sum(sizes.values()) > UPLOAD_SPEC_BYTES
        ):
            sizes.pop(specs.popitem(last=False)[0], None)
    specs.move_to_end(key)
    return specs[key]


def get(build: Builder, name: str, result: Analysis, *params) -> dict:
    """``build(name, result, *params)`` as a wired spec (plotly or Vega-Lite).

    Shipped and served models: cached across sessions under (figure, model key,
    sentence, params); ``result`` must be that model's analysis of that sentence (the
    analysis itself is not part of the key). Uploads: kept in this session only.
    """
    return _kept(build, name, result, params, vspec.wired)


def table(build: Builder, name: str, result: Analysis, *params) -> pa.Table | None:
    """``build(name, result, *params)``, an Arrow table (:func:`top_next`,
    :func:`head_stats`), kept as :func:`get` keeps specs."""
    return _kept(build, name, result, params, lambda t: t)
