"""What the lab views compute once per model: the heads' mean outputs over the
validation text (mean-ablation's values) and the induction probe's sequence.

Shipped and served models: once per server (``st.cache_resource``); an upload: once per
session (``ui.loaders``' per-model cache).
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from corpus.heldout import validation_lines
from inference import lab
from inference.head_stats import probe_word_ids
from ui import loaders
from ui.shared import SharedCache

PROBE_PERIOD = 12  # words in each copy of the induction probe (two copies: 24 tokens)
PROBE_SEED = 0


def mean_outputs(model) -> np.ndarray:
    """(L, H, d_head): each head's mean output over 4,096 tokens of validation text."""
    T = min(64, model.config.context_length)
    rows = lab.validation_chunks(model.tokenizer, validation_lines(), T)
    return lab.mean_head_outputs(model, rows)


@st.cache_resource(max_entries=8, show_spinner="Measuring each head's mean output…")
def _shipped_means(kind: str) -> np.ndarray:
    return mean_outputs(loaders.server_model(kind))


def get_means(name: str) -> np.ndarray:
    """Mean-ablation's values for the model key ``name``: (L, H, d_head)."""
    return loaders._per_model(name, _shipped_means, mean_outputs)


@st.cache_resource(show_spinner=False)
def _grids() -> SharedCache:
    """This server's importance grids of shared (shipped, served) models: (L, H) floats."""
    return SharedCache(4096)


def importance(name: str, ids, mode: str, positions=None) -> np.ndarray:
    """``inference.lab.importance_grid`` of the model key ``name`` on ``ids``, kept: it
    does not change when the ablated heads do, so a click on the grid reruns one ablation,
    not L·H + 1 runs. Shared by every session for a shared model, this session's for an
    upload (its cache: ``ui.loaders``)."""
    model = loaders.get_model(name)
    means = get_means(name) if mode == "mean" else None
    cols = None if positions is None else tuple(positions)
    key = (model.name, tuple(ids), mode, cols)

    def compute() -> np.ndarray:
        return lab.importance_grid(model, ids, mode, means, cols)

    if loaders.is_shared(name):
        return _grids().get(key, compute)
    kept = loaders.upload_cache(name)
    if key not in kept:
        kept[key] = compute()
    return kept[key]


def probe_ids(model, period: int = PROBE_PERIOD) -> list[int]:
    """The induction probe: ``period`` random tokens, then the same tokens again (ARENA
    1.2's repeated random tokens), seed ``PROBE_SEED``: whole words where the vocabulary
    has them, as the app's induction score draws (``inference.head_stats.probe_word_ids``:
    a character model's are its characters).
    The loss on its second copy is what an induction head lowers."""
    cfg = model.config
    words = probe_word_ids(model.tokenizer.get_vocab(), cfg.vocab_size, set())
    period = max(2, min(period, cfg.context_length // 2))
    rng = np.random.default_rng(PROBE_SEED)
    block = rng.choice(words, size=period, replace=len(words) < period).tolist()
    return [int(i) for i in block + block]


def second_copy(period: int) -> range:
    """Positions (indices of the next-token losses) that predict the second copy's tokens
    2..period of the probe: the first token of the copy cannot be guessed."""
    return range(period, 2 * period - 1)
