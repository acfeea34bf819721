"""Runs of the lab graph: a hand on every head and residual cell (numpy, no torch).

The lab graph (``<kind>.lab.onnx``, ``models/lab.py``, ``models/contract.py``) takes a
batch of runs, each with its own overrides; this module builds those batches and reads
them: zero- and mean-ablation of heads and the loss per position (ablation as in ARENA
1.2's ``get_ablation_scores``; zero- and mean-ablation can disagree about which head
matters, so both are offered and the mode is always named), and the head importance grid
(every head ablated alone, one batch). Activation patching is ``inference/patching.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from inference.behaviour import log_softmax
from models import contract
from models.tokenizer import encode

MODES = ("zero", "mean")  # what replaces an ablated head's output


class NoLabGraph(RuntimeError):
    """The model has no lab graph (a foreign ONNX upload): no interventions."""


def overrides(cfg, B: int, T: int) -> dict[str, np.ndarray]:
    """The lab graph's override inputs with nothing overridden: float32 zeros,
    ``head_mask`` (B, L, H, T), ``head_values`` (B, L, H, T, D), ``resid_mask``
    (B, L+1, T), ``resid_values`` (B, L+1, T, C)."""
    L, H, D, C = cfg.n_layer, cfg.n_head, cfg.d_head, cfg.d_model
    return {
        "head_mask": np.zeros((B, L, H, T), np.float32),
        "head_values": np.zeros((B, L, H, T, D), np.float32),
        "resid_mask": np.zeros((B, L + 1, T), np.float32),
        "resid_values": np.zeros((B, L + 1, T, C), np.float32),
    }


def run_batches(run_one, feeds: dict[str, np.ndarray], batch: int | None) -> dict[str, np.ndarray]:
    """Run the lab graph on ``feeds`` (``contract.LAB_INPUTS``, B runs) in batches of
    ``batch`` runs (None: all at once; DeltaNet's graph takes one run at a time), through
    ``run_one(feeds) -> {name: array}``. The per-run outputs (``logits``, ``head_out``,
    ``resid``) are joined along B; the lens and attribution are run 0's."""
    B = feeds["input_ids"].shape[0]
    step = B if batch is None else batch
    parts = [run_one({k: v[i : i + step] for k, v in feeds.items()}) for i in range(0, B, step)]
    joined = dict(parts[0])
    for name in ("logits", "head_out", "resid"):
        joined[name] = np.concatenate([p[name] for p in parts])  # (B, ...)
    return joined


def lab(model, ids: Sequence[int], B: int = 1, **set_: np.ndarray) -> dict[str, np.ndarray]:
    """``B`` runs of ``model``'s lab graph on the sentence ``ids`` (T tokens) with the
    override arrays in ``set_`` (names of :func:`overrides`; the others zero).

    Raises:
        NoLabGraph: the model has no lab graph.
        ModelRunError: onnxruntime failed.
    """
    if not getattr(model, "has_lab", False):
        raise NoLabGraph(f"{model.name} has no lab graph: no interventions")
    feeds = overrides(model.config, B, len(ids)) | set_
    feeds["input_ids"] = np.tile(np.asarray(ids, np.int64), (B, 1))  # (B, T)
    return model.lab(feeds)


FEED_BYTES = 64 << 20  # the override arrays of one call at most: larger grids run in parts
LENS_BYTES = 512 << 20  # run 0's logit lens, (L+1) x T x V probabilities, at most


def too_long(cfg, T: int) -> str | None:
    """One line when a sentence of T tokens is too long for the lab graph of a model of
    config ``cfg`` (its logit lens holds (L+1) x T x V float32 probabilities: GPT-2 small
    at T = 1,024 would need 2.7 GB), else None."""
    most = LENS_BYTES // (4 * (cfg.n_layer + 1) * cfg.vocab_size)
    if T <= most:
        return None
    return (f"The lab views read at most {most:,} tokens of this model (their logit lens "
            f"spans its {cfg.vocab_size:,}-token vocabulary at every layer): this sentence "
            f"has {T:,}. Shorten it.")  # fmt: skip


def _runs_per_call(cfg, T: int, n: int) -> int:
    """How many of ``n`` runs of T tokens one lab call takes within ``FEED_BYTES``: the
    override arrays, the residual stream and the logits of a run, float32."""
    per_run = 4 * T * (cfg.n_layer * cfg.d_model * 2 + cfg.d_model + cfg.vocab_size)
    return max(1, min(n, FEED_BYTES // per_run))


def runs(model, ids: Sequence[int], n: int, fill) -> np.ndarray:
    """The logits of ``n`` runs of the lab graph on the sentence ``ids`` (T tokens), run in
    parts whose override arrays stay under ``FEED_BYTES`` (GPT-2 small's residual grid at
    T = 64 would need 2 GB at once). ``fill(feeds, start)`` sets the overrides of runs
    start.. start + B - 1 in the zeroed ``feeds`` of B runs (:func:`overrides`).

    Returns:
        (n, T, V) logits.

    Raises:
        NoLabGraph; ModelRunError.
    """
    cfg, T = model.config, len(ids)
    part = _runs_per_call(cfg, T, n)
    logits = []
    for start in range(0, n, part):
        feeds = overrides(cfg, min(part, n - start), T)
        fill(feeds, start)
        logits.append(lab(model, ids, B=len(feeds["head_mask"]), **feeds)["logits"])
    return np.concatenate(logits)  # (n, T, V)


def next_token_losses(logits: np.ndarray, ids: Sequence[int]) -> np.ndarray:
    """Cross-entropy (nats) of each next token: logits (B, T, V), ids (T,) -> (B, T-1),
    column t the loss of predicting ids[t + 1] at position t."""
    logp = log_softmax(logits[:, :-1])  # (B, T-1, V)
    nxt = np.asarray(ids[1:], np.int64)  # (T-1,)
    return -np.take_along_axis(logp, nxt[None, :, None], axis=-1)[..., 0]  # (B, T-1)


def mean_head_outputs(model, rows: np.ndarray) -> np.ndarray:
    """Each head's mean output over every position of ``rows`` (N, T) of validation text
    (:func:`validation_chunks`): (L, H, d_head), what mean-ablation puts in place of a
    head's output. The rows run in lab calls within ``FEED_BYTES``.

    Raises:
        NoLabGraph; ModelRunError.
    """
    if not getattr(model, "has_lab", False):
        raise NoLabGraph(f"{model.name} has no lab graph: no interventions")
    N, T = rows.shape
    part = _runs_per_call(model.config, T, N)
    total = 0.0
    for start in range(0, N, part):  # a large model's rows in parts (``FEED_BYTES``)
        chunk = rows[start : start + part]  # (n, T)
        feeds = overrides(model.config, len(chunk), T) | {"input_ids": chunk}
        total = total + model.lab(feeds)["head_out"].sum(axis=(0, 3))  # (L, H, D)
    return (total / (N * T)).astype(np.float32)  # (L, H, D)


def ablation_values(cfg, heads, mode: str, means: np.ndarray | None, T: int):
    """``head_mask`` (L, H, T) and ``head_values`` (L, H, T, D) that ablate ``heads``
    ((layer, head) pairs) at every position, by ``mode`` (``zero`` or ``mean``).

    Raises:
        ValueError: an unknown mode, mean mode without ``means``, or a head out of range.
    """
    if mode not in MODES or (mode == "mean" and means is None):
        raise ValueError(f"ablation mode must be one of {MODES} (mean needs the means)")
    L, H = cfg.n_layer, cfg.n_head
    mask = np.zeros((L, H, T), np.float32)
    values = np.zeros((L, H, T, cfg.d_head), np.float32)
    for layer, head in heads:
        if not (0 <= layer < L and 0 <= head < H):
            raise ValueError(f"no head L{layer} H{head} in a model of {L} x {H} heads")
        mask[layer, head] = 1.0
        if mode == "mean":
            values[layer, head] = means[layer, head]  # (D,) over every position
    return mask, values


@dataclass(frozen=True)
class Ablation:
    """A sentence before and after ablating heads: ``losses`` (2, T-1) nats per position
    (row 0 the model as it is, row 1 ablated), ``top`` (2, T) int64 the top prediction,
    ``top_prob`` (2, T) its probability."""

    heads: tuple[tuple[int, int], ...]
    mode: str
    losses: np.ndarray
    top: np.ndarray
    top_prob: np.ndarray

    @property
    def mean_losses(self) -> tuple[float, float]:
        """Mean loss (nats) over the sentence, before and after."""
        return float(self.losses[0].mean()), float(self.losses[1].mean())


def ablate(model, ids, heads, mode: str = "zero", means=None) -> Ablation:
    """The sentence ``ids`` with no head ablated and with ``heads`` ablated, one batch of 2.

    Raises:
        ValueError: see :func:`ablation_values`; NoLabGraph; ModelRunError.
    """
    T = len(ids)
    mask, values = ablation_values(model.config, heads, mode, means, T)
    zeros = overrides(model.config, 1, T)
    out = lab(model, ids, B=2, head_mask=np.stack([zeros["head_mask"][0], mask]),
              head_values=np.stack([zeros["head_values"][0], values]))  # fmt: skip
    probs = np.exp(log_softmax(out["logits"]))  # (2, T, V)
    return Ablation(tuple(map(tuple, heads)), mode, next_token_losses(out["logits"], ids),
                    probs.argmax(-1), probs.max(-1))  # fmt: skip


def importance_grid(model, ids, mode: str = "zero", means=None, positions=None) -> np.ndarray:
    """The loss increase (nats) when each head alone is ablated: (L, H), the mean over
    ``positions`` (indices into the T-1 next-token losses; None: all) of the ablated loss
    minus the unablated one. L·H + 1 runs of the lab graph (run 0 unablated), in one call
    where they fit :data:`FEED_BYTES`.

    Raises:
        ValueError: see :func:`ablation_values`; NoLabGraph; ModelRunError.
    """
    cfg = model.config
    L, H = cfg.n_layer, cfg.n_head
    if mode not in MODES or (mode == "mean" and means is None):
        raise ValueError(f"ablation mode must be one of {MODES} (mean needs the means)")

    def fill(feeds, start):  # run r > 0 ablates head r - 1 (layer-major); run 0 none
        for b in range(len(feeds["head_mask"])):
            if start + b == 0:
                continue
            layer, head = divmod(start + b - 1, H)
            feeds["head_mask"][b, layer, head] = 1.0
            if mode == "mean":
                feeds["head_values"][b, layer, head] = means[layer, head]  # (D,) each position

    logits = runs(model, ids, L * H + 1, fill)  # (L·H + 1, T, V)
    losses = next_token_losses(logits, ids)  # (L·H + 1, T-1)
    cols = slice(None) if positions is None else np.asarray(positions, np.int64)
    mean = losses[:, cols].mean(axis=1)  # (L·H + 1,)
    return (mean[1:] - mean[0]).reshape(L, H)  # (L, H)


def lab_axes_ok(name: str, array: np.ndarray, cfg, B: int, T: int) -> bool:
    """True when a lab output has its contract shape (``contract.LAB_AXES``) for B runs
    of T tokens (the upload worker's replies are checked with it)."""
    sizes = contract.axis_sizes(cfg, T) | {"B": B}
    return array.shape == tuple(sizes[a] for a in contract.LAB_AXES[name])


def validation_chunks(tokenizer, lines: Sequence[str], T: int, n_tokens: int = 4096):
    """The validation ``lines`` as one token stream cut into rows of ``T`` tokens, up to
    ``n_tokens`` in all: (N, T) int64, the text :func:`mean_head_outputs` averages over."""
    stream: list[int] = []
    for line in lines:
        try:
            stream += encode(tokenizer, line).ids
        except Exception:  # noqa: BLE001 - a word its vocabulary cannot read: skip the line
            continue
        if len(stream) >= n_tokens:
            break
    n = max(1, min(len(stream), n_tokens) // T)
    return np.asarray(stream[: n * T], np.int64).reshape(n, T)  # (N, T)


def sharpness(attn: np.ndarray) -> np.ndarray:
    """How striking each head's pattern looks: attn (L, H, T, T) -> (L, H), the mean over
    queries 1..T-1 of the largest share one key takes (|weight| over the row's sum of
    |weight|: the delta rule's implied weights are signed). 1 = every query on one key;
    1/t for a uniform row (query 0 has one key and is left out)."""
    w = np.abs(np.asarray(attn, dtype=np.float64))[:, :, 1:]  # (L, H, T-1, T)
    share = w / np.maximum(w.sum(-1, keepdims=True), 1e-12)  # (L, H, T-1, T)
    return share.max(-1).mean(-1)  # (L, H)


def looks_and_does(sharp: np.ndarray, effect: np.ndarray) -> tuple[tuple[int, int], ...]:
    """The lesson "attention is not explanation"'s two heads (Jain & Wallace 2019): among
    the heads of above-median ``sharpness`` the one whose ablation changes the loss least
    (|effect|), and among the others the one whose ablation raises it most. (L, H) each."""
    H = sharp.shape[1]
    sharp_flat, effect_flat = sharp.reshape(-1), effect.reshape(-1)
    striking = sharp_flat >= np.median(sharp_flat)
    quiet = np.where(striking, np.abs(effect_flat), np.inf).argmin()
    plain = np.where(~striking, effect_flat, -np.inf).argmax()
    if not np.isfinite(effect_flat[plain]) or striking.all():
        plain = np.where(np.arange(sharp_flat.size) != quiet, effect_flat, -np.inf).argmax()
    return divmod(int(quiet), H), divmod(int(plain), H)
