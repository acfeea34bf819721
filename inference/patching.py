"""Activation patching (numpy, no torch): which heads and residual cells carry a behaviour.

The indirect-object task of Wang et al. 2022 ("Interpretability in the Wild"): a clean
sentence ("when mary and john went to the store , john gave a drink to" -> mary) and a
corrupted one of the same length (the two names swapped -> john), and a metric, the
logit difference logit(correct) - logit(wrong) at the last position.

* **Denoising** (run the corrupted sentence, one piece taken from the clean run): is this
  piece enough to bring the clean answer back?
* **Noising** (run the clean sentence, one piece taken from the corrupted run): is this
  piece needed, does the answer break without it?

Both are reported on one scale: (metric - corrupted metric) / (clean metric - corrupted
metric), 0 = the corrupted run's answer, 1 = the clean run's. Denoising: a cell near 1
restores the behaviour alone. Noising: a cell far below 1 is needed for it.
A piece is a head's output at every position (L x H runs), or the residual stream at one
boundary and one position ((L+1) x T runs), each grid a batch of the lab graph (``inference.lab.runs``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from corpus.probes import ioi_probes
from inference.lab import lab, runs
from models.tokenizer import encode

DIRECTIONS = ("denoise", "noise")


@lru_cache(maxsize=1)
def _probes(n: int) -> tuple:
    return tuple(ioi_probes(max(n, 64)))


def ioi_pair(seed: int = 0) -> tuple[str, str, str, str]:
    """The default pair: ``(clean, corrupted, correct, wrong)``: an indirect-object probe
    (``corpus.probes.ioi_probes``) and the same sentence with its two names swapped; in
    the clean one ``correct`` is the answer, in the corrupted one ``wrong`` is."""
    prefix, correct, wrong = _probes(seed + 1)[seed]
    swap = {correct: wrong, wrong: correct}
    corrupted = " ".join(swap.get(word, word) for word in prefix.split(" "))
    return prefix, corrupted, correct, wrong


def default_pair(tokenizer, tries: int = 64) -> tuple[str, str, str, str]:
    """The first of :func:`ioi_pair`'s pairs (seeds 0, 1, ...) whose two sentences are the
    same number of tokens for ``tokenizer`` (a byte-level BPE may split "Emma" and
    "Chloe" differently; patching needs equal lengths); the first pair when none is."""
    for seed in range(tries):
        pair = ioi_pair(seed)
        try:
            if len(encode(tokenizer, pair[0]).ids) == len(encode(tokenizer, pair[1]).ids):
                return pair
        except Exception:  # noqa: BLE001 - a word-level vocabulary without these names
            continue
    return ioi_pair(0)


def logit_diff(logits: np.ndarray, correct: int, wrong: int) -> np.ndarray:
    """logits (B, T, V) -> (B,): logit(correct) - logit(wrong) at the last position."""
    return logits[:, -1, correct] - logits[:, -1, wrong]


@dataclass(frozen=True)
class Patching:
    """A patching grid and its two ends: ``grid`` (L, H) or (L+1, T) on the 0 = corrupted,
    1 = clean scale; ``clean`` and ``corrupted`` the metric of the two runs (logits)."""

    grid: np.ndarray
    clean: float
    corrupted: float
    direction: str

    def largest(self) -> tuple[int, int]:
        """The cell with the largest effect: the highest for denoising, the lowest for
        noising."""
        flat = self.grid.argmax() if self.direction == "denoise" else self.grid.argmin()
        return tuple(int(i) for i in np.unravel_index(flat, self.grid.shape))


def _ends(model, clean: Sequence[int], corrupted: Sequence[int], correct: int, wrong: int):
    """Both runs: (clean outputs, corrupted outputs, clean metric, corrupted metric)."""
    if len(clean) != len(corrupted):
        raise ValueError(f"the clean sentence has {len(clean)} tokens and the corrupted one "
                         f"{len(corrupted)}: patching needs the same length")  # fmt: skip
    a, b = lab(model, clean), lab(model, corrupted)
    return a, b, float(logit_diff(a["logits"], correct, wrong)[0]), \
        float(logit_diff(b["logits"], correct, wrong)[0])  # fmt: skip


def _scaled(metric: np.ndarray, clean: float, corrupted: float) -> np.ndarray:
    span = clean - corrupted
    return (metric - corrupted) / (span if abs(span) > 1e-9 else np.nan)


def patch_heads(model, clean, corrupted, correct: int, wrong: int, direction: str = "denoise"):
    """Each head's output (every position) patched alone: a :class:`Patching` (L, H).

    Raises:
        ValueError: sentences of different lengths or an unknown direction;
        inference.lab.NoLabGraph; ModelRunError.
    """
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}")
    a, b, m_clean, m_corr = _ends(model, clean, corrupted, correct, wrong)
    base, source = (corrupted, a) if direction == "denoise" else (clean, b)
    cfg = model.config
    L, H = cfg.n_layer, cfg.n_head

    def fill(feeds, start):  # run r patches head r (layer-major) at every position
        for b in range(len(feeds["head_mask"])):
            layer, head = divmod(start + b, H)
            feeds["head_mask"][b, layer, head] = 1.0
            feeds["head_values"][b, layer, head] = source["head_out"][0, layer, head]  # (T, D)

    metric = logit_diff(runs(model, base, L * H, fill), correct, wrong).reshape(L, H)  # (L, H)
    return Patching(_scaled(metric, m_clean, m_corr), m_clean, m_corr, direction)


def patch_residual(model, clean, corrupted, correct: int, wrong: int, direction="denoise"):
    """The residual stream at each boundary (L + 1) and position (T) patched alone: a
    :class:`Patching` (L+1, T). Boundary l < L is block l's input, L the final stream.

    Raises:
        as :func:`patch_heads`.
    """
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}")
    a, b, m_clean, m_corr = _ends(model, clean, corrupted, correct, wrong)
    base, source = (corrupted, a) if direction == "denoise" else (clean, b)
    cfg, T = model.config, len(clean)
    K = cfg.n_layer + 1

    def fill(feeds, start):  # run r patches boundary r // T at position r % T
        for b in range(len(feeds["resid_mask"])):
            boundary, t = divmod(start + b, T)
            feeds["resid_mask"][b, boundary, t] = 1.0
            feeds["resid_values"][b, boundary, t] = source["resid"][0, boundary, t]  # (C,)

    metric = logit_diff(runs(model, base, K * T, fill), correct, wrong).reshape(K, T)
    return Patching(_scaled(metric, m_clean, m_corr), m_clean, m_corr, direction)
