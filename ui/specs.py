"""Figure specs of the visualizer's views, computed once for everyone.

The builders are ``inference.view_specs``' (arrays in, spec out; the bench times the same
functions); this module keeps what they return.

A rerun builds only the figures on screen, and for the shipped models each one
only once per server: specs are cached across sessions (``ui.shared.SharedCache``
held by ``st.cache_resource``), keyed by the figure, the model key, the sentence and
the view's own parameters (layer, head, mode, query token, ...), so thirty students
clicking through the heads of the teacher's sentence share one computation per
head. The cached value is the spec as it goes to the browser (``viz.spec.wire``:
plain JSON, typed arrays), shared by every session: never modified.

A kept plotly spec is kept encoded (``ui.figures.Encoded``: the JSON Streamlit sends),
shown as it is (:func:`shown`) and decoded only for a view that reads it (:func:`get`):
a few hundred kept figures were tens of thousands of dicts and lists (an attention
figure at T = 64 has 64 ▶ play frames), which every full pass of Python's cyclic
collector walked, freezing every session's thread for 40-70 ms each time (issue #25).
Bytes are one object it never looks into, and a shown figure is not encoded again.

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

from inference.analysis import Analysis, sentence_key
from inference.memory import release_freed
from inference.view_specs import MODEL_ONLY, PER_SENTENCE
from ui import lanes, loaders, served
from ui.figures import Encoded, encode
from ui.shared import SharedCache
from viz import spec as vspec

Builder = Callable[..., dict]
UPLOAD_SPECS = 64  # specs an upload's session keeps
UPLOAD_SPEC_BYTES = 32 * 2**20  # and their bytes in all (a heatmap at T = 2,000: ~20 MB)


class _Facts:
    """:class:`inference.view_specs.ModelFacts` of model ``name``, read from the cached
    loaders on first use (a figure that needs no positional encoding computes none)."""

    def __init__(self, name: str):
        self.name = name

    @property
    def config(self):
        return loaders.get_model(self.name).config

    @property
    def vocab(self) -> list[str]:
        return loaders.get_vocab(self.name)

    @property
    def pos_enc(self) -> np.ndarray:
        return loaders.get_pos_enc(self.name)

    @property
    def induction(self) -> np.ndarray | None:
        return loaders.get_induction(self.name)


# Sizes at T = 64 (JSON): a head's heatmap 24 kB, its row 3 kB, the mask panels 60 kB, a
# head grid 290 kB. At most 256 x 0.06 + 48 x 0.29 = 30 MB; a class on the attention view
# (2 models, 12 heads, a sentence each) uses a few MB. An upload's, in its session, at
# T = 256: a head's heatmap 0.37 MB, the mask panels 0.82 MB, the grid (an overview) at
# most 0.9 MB; at T = 1024: 5.8 MB, 13 MB and 0.9 MB.
PER_HEAD_ENTRIES, PER_SENTENCE_ENTRIES = 256, 48
# And by bytes: one student pasting paragraphs (T = 64, each new) filled both counts and
# left the server 85 MB larger than before, beside the analyses' own budget (issue #25).
SHIPPED_FIGURES_BYTES = served.megabytes("ATTNVIZ_SHIPPED_FIGURES_MB", 16)


def packed(spec: object) -> object:
    """A wired plotly spec :class:`~ui.figures.Encoded` (the JSON that goes to the
    browser); a Vega-Lite spec (``$schema``: its Arrow tables are bytes, sent as they
    are) and anything else (a table) as it is."""
    if not isinstance(spec, dict) or "$schema" in spec:
        return spec
    return encode(spec)


def unpacked(value: object) -> object:
    """A kept value as a wired spec again: an encoded one decoded (a new dict at each
    call), anything else as it is."""
    return value.spec() if isinstance(value, Encoded) else value


def spec_bytes(value: object) -> int:
    """About how many bytes a wired spec or an Arrow table holds: strings and bytes by
    their length, other leaves 8 bytes, containers the sum of their items."""
    if isinstance(value, pa.Table):
        return value.nbytes
    if isinstance(value, Encoded):
        return len(value.json)
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
    """This server's figure specs of the shipped models, for every session (bounded by
    ``SHIPPED_FIGURES_BYTES``), and of the served models (``served.FIGURE_CACHE_BYTES``)."""
    mine, theirs = SHIPPED_FIGURES_BYTES // 2, served.FIGURE_CACHE_BYTES // 2

    def bounded(entries: int, nbytes: int) -> SharedCache:
        return SharedCache(entries, max_bytes=nbytes, size=spec_bytes, on_evict=release_freed)

    return {
        "per_head": bounded(PER_HEAD_ENTRIES, mine),
        "per_sentence": bounded(PER_SENTENCE_ENTRIES, mine),
        "served_per_head": bounded(4096, theirs),
        "served_per_sentence": bounded(1024, theirs),
    }


def _built(build: Builder, name: str, result: Analysis, params: tuple, finish) -> object:
    """``finish(build(name, result, *params))``, packed (:func:`packed`)."""
    return packed(finish(build(_Facts(name), result, *params)))


def _kept(build: Builder, name: str, result: Analysis, params: tuple, finish) -> object:
    """:func:`_built`, kept as :func:`get` says. Before building one, a run that makes
    way does so (``ui.lanes``: building figures is a heavy run's heavy step), outside
    the cache's locks (a short run asking for the same figure must not wait on it)."""
    params = tuple(tuple(p) if isinstance(p, list) else p for p in params)
    text = "" if build in MODEL_ONLY else sentence_key(result)  # generated ids: text + ids
    key = (build.__name__, name, text, params)
    if loaders.is_shared(name):
        kind = "per_sentence" if build in PER_SENTENCE | MODEL_ONLY else "per_head"
        cache = shared()[kind if name in loaders.SHIPPED_KINDS else f"served_{kind}"]
        if key not in cache:
            lanes.make_way()
        return cache.get(key, lambda: _built(build, name, result, params, finish))
    mine = st.session_state.setdefault(loaders.UPLOAD_CACHE, {})
    specs = mine.setdefault("specs", OrderedDict())
    sizes = mine.setdefault("spec_bytes", {})
    if key not in specs:
        lanes.make_way()
        specs[key] = value = _built(build, name, result, params, finish)
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
    A view that only shows the figure takes :func:`shown` instead.
    """
    return unpacked(_kept(build, name, result, params, vspec.wired))


def shown(build: Builder, name: str, result: Analysis, *params) -> Encoded | dict:
    """The figure of :func:`get` as ``ui.figures.plot`` sends it: kept as it is
    encoded (not decoded, not encoded again), or a spec that cannot be (a Vega-Lite
    spec with Arrow tables) as it is."""
    return _kept(build, name, result, params, vspec.wired)


def table(build: Builder, name: str, result: Analysis, *params) -> pa.Table | None:
    """``build(name, result, *params)``, an Arrow table (``view_specs.top_next``,
    ``view_specs.head_stats``), kept as :func:`get` keeps specs."""
    return _kept(build, name, result, params, lambda t: t)
