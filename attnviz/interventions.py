"""Ablation, activation patching and the logit lens for a notebook: the lab views' numbers,
from the same functions (``inference/lab.py``, ``inference/patching.py``) and the same lab
graph (``models/lab.py``: a hand on every head's output and every residual cell).

A model without a lab graph (a foreign ONNX graph) raises ``inference.lab.NoLabGraph``.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import numpy as np

from attnviz.model import Model, Sentence
from inference import lab, patching
from models.tokenizer import encode

MODES = lab.MODES  # "zero": a head's output replaced by zeros; "mean": by its mean output


@cache
def _means(runnable) -> np.ndarray:
    from ui.lab_loaders import mean_outputs  # the app's: 4,096 tokens of validation text

    return mean_outputs(runnable)


def mean_outputs(model: Model) -> np.ndarray:
    """Each head's mean output (L, H, D) over 4,096 tokens of the held-out validation
    text: what mean-ablation puts in a head's place (computed once per model)."""
    return _means(model.runnable)


def ablate(sentence: Sentence, heads: Sequence[tuple[int, int]], mode: str = "zero"):
    """``sentence`` with no head ablated and with ``heads`` ((layer, head) pairs) ablated
    at every position: an :class:`inference.lab.Ablation` with ``losses`` (2, T-1) nats
    of predicting each next token (row 0 as trained, row 1 ablated), ``top`` (2, T) the top
    prediction's id, ``top_prob`` (2, T) its probability, ``mean_losses`` (before, after).

    Raises:
        ValueError: an unknown mode or head; inference.lab.NoLabGraph.
    """
    means = mean_outputs(sentence.model) if mode == "mean" else None
    return lab.ablate(sentence.model.runnable, sentence.ids, heads, mode, means)


def importance(sentence: Sentence, mode: str = "zero") -> np.ndarray:
    """Head importance (L, H), nats: the mean next-token loss on ``sentence`` with that
    head alone ablated, minus the loss with none (L·H + 1 runs of the lab graph).

    Raises:
        ValueError: an unknown mode; inference.lab.NoLabGraph.
    """
    means = mean_outputs(sentence.model) if mode == "mean" else None
    return lab.importance_grid(sentence.model.runnable, sentence.ids, mode, means)


def lens(sentence: Sentence) -> dict[str, np.ndarray]:
    """One lab-graph run of ``sentence`` (``contract.LAB_OUTPUTS``, K = L + 1 depths):
    the logit lens ``lens_top`` (K, T) top next-token id when the residual stream at each
    depth (the embedding, then after each block) is read through the final LayerNorm and
    the unembedding, ``lens_top_prob`` (K, T) its probability, ``lens_target_prob`` (K, T)
    the probability of the token that comes next (last column: of the model's own
    prediction), ``target`` (T,) that token; the direct logit attribution of its logit
    ``dla_heads`` (L, H, T), ``dla_mlp`` (L, T), ``dla_embed`` (T,), ``dla_bias`` (T,),
    logits, which sum to it; ``resid`` (1, K, T, C) and ``head_out`` (1, L, H, T, D).

    Raises:
        inference.lab.NoLabGraph; ValueError: a sentence too long for the lens' memory.
    """
    if line := lab.too_long(sentence.model.config, sentence.T):
        raise ValueError(line)
    return lab.lab(sentence.model.runnable, sentence.ids)


def answer_id(model: Model, word: str | int) -> int:
    """The token id a patching answer is scored by: an id as it is; a word as one token
    (with a leading space first, as a byte-level BPE writes a word after another), else
    its first token, as the app's patching view reads it.

    Raises:
        ValueError: an empty answer.
    """
    if isinstance(word, int):
        return word
    forms = [encode(model.tokenizer, f" {word.strip()}").ids, encode(model.tokenizer, word).ids]
    for form in forms:
        if len(form) == 1:
            return form[0]
    if not forms[1]:
        raise ValueError(f"the answer {word!r} has no token: give one word")
    return forms[1][0]


def patch(
    model: Model,
    clean: str,
    corrupted: str,
    answer: str | int,
    wrong: str | int,
    direction: str = "denoise",
):
    """Activation patching (Wang et al. 2022) of two sentences of the same length: the
    metric is logit(answer) - logit(wrong) at the last position. Returns ``(heads,
    residual)``, two :class:`inference.patching.Patching`: ``grid`` (L, H) each head's
    output patched alone, and (L+1, T) each residual cell patched alone, on the scale
    0 = the corrupted run's metric, 1 = the clean run's; ``clean`` and ``corrupted`` the
    two metrics (logits). ``direction``: "denoise" (the corrupted run with one piece of the
    clean run) or "noise" (the other way).

    Raises:
        ValueError: sentences of different lengths, an unknown direction;
        inference.lab.NoLabGraph.
    """
    tok = model.tokenizer
    ids = encode(tok, clean).ids, encode(tok, corrupted).ids
    args = (model.runnable, *ids, answer_id(model, answer), answer_id(model, wrong), direction)
    return patching.patch_heads(*args), patching.patch_residual(*args)


def default_pair(model: Model) -> tuple[str, str, str, str]:
    """The patching view's opening example for this model's vocabulary: (clean,
    corrupted, answer, wrong), an indirect-object pair."""
    return patching.default_pair(model.tokenizer)
