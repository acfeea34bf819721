"""From a typed sentence to every number the app shows (no torch, no Streamlit).

``analyze(model, text)`` tokenizes, truncates to the context length, runs the
inspect graph once and, for linear attention, rolls the recurrent step graph
over the same tokens to measure max |recurrent - parallel| (``with_recurrent``;
the app asks for it only in the view that shows it). The app renders
the returned :class:`Analysis`; the benchmarks time this function.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd

from inference import behaviour, head_stats
from inference.given_ids import given_encoding, retokenized_notice
from inference.runtime import OnnxModel
from inference.text_input import EmptyInput, clean_text, left_out_notice, suggest, visible
from models.tokenizer import UNK, encode, vocab_of

# The inspect outputs a lean analysis keeps (``analyze(keep=...)``; a large model's, as the
# server's operator models): what the views draw, less ``scores`` (one head's are computed
# from its q and k: :func:`head_scores`) and ``logits`` (``probs`` holds them).
LEAN_OUTPUTS = ("attn", "q", "k", "v", "head_out", "pos_enc", "attn_in", "phi_q", "phi_k")


@dataclass
class Analysis:
    """Everything computed for one sentence on one model.

    Attributes:
        text: the cleaned text that was tokenized.
        ids, tokens: (T,) token ids and their strings.
        unknown: (T,) True for pieces of unknown words.
        suggestions: unknown word -> closest known words.
        notices: human-readable notes (truncation, removed characters, ...).
        outputs: the contract's arrays (``attn`` (L, H, T, T), ``q`` (L, H, T, d_head), ...).
        probs: (T, V) next-token probabilities at each position.
        recurrent: linear only: ``state`` (L, H, T, d_head, d_head), ``normalizer``
            (L, H, T, d_head), ``y`` (L, H, T, d_head) and ``logits`` (T, V) from the
            step graph.
        recurrent_max_diff: linear only: max |recurrent - parallel| over y, state,
            normalizer and logits.
        given_ids: the ids were handed in (a generated continuation's), not made by
            tokenizing ``text`` (:func:`sentence_key`).
    """

    text: str
    ids: list[int]
    tokens: list[str]
    unknown: list[bool]
    suggestions: dict[str, list[str]]
    notices: list[str]
    outputs: dict[str, np.ndarray]
    probs: np.ndarray
    recurrent: dict[str, np.ndarray] | None = None
    recurrent_max_diff: float | None = None
    given_ids: bool = False

    @property
    def T(self) -> int:
        return len(self.ids)

    @property
    def display_tokens(self) -> list[str]:
        """Tokens as drawn: pieces of unknown words end in ``*``; whitespace and control
        characters are made visible (:func:`visible`: ``␣``, ``⏎``, ``⇥``, ``\\xNN``)."""
        shown = [visible(t) for t in self.tokens]
        return [t + ("*" if u else "") for t, u in zip(shown, self.unknown, strict=True)]


def sentence_key(result: Analysis) -> str | tuple[str, tuple[int, ...]]:
    """What a cache of results derived from ``result`` keys the sentence by: its text,
    or, for ids handed in, the text and the ids (the same text tokenized is another
    sentence)."""
    return (result.text, tuple(result.ids)) if result.given_ids else result.text


def softmax(logits: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax along ``axis``."""
    z = np.exp(logits - logits.max(axis=axis, keepdims=True))
    return z / z.sum(axis=axis, keepdims=True)


def recurrent_readout(phi_q: np.ndarray, state: np.ndarray, normalizer: np.ndarray, eps: float):
    """y_i = phi(q_i)^T S_i / (phi(q_i)^T z_i + eps).

    Args:
        phi_q: (L, H, T, D); state: (L, H, T, D, D); normalizer: (L, H, T, D).

    Returns:
        (L, H, T, D).
    """
    numerator = np.einsum("lhtd,lhtde->lhte", phi_q, state)  # (L, H, T, D)
    denominator = np.einsum("lhtd,lhtd->lht", phi_q, normalizer)[..., None] + eps  # (L,H,T,1)
    return numerator / denominator


def analyze(
    model: OnnxModel,
    text: str,
    recurrent: bool = True,
    keep: tuple[str, ...] | None = None,
    max_tokens: int | None = None,
    ids: list[int] | None = None,
) -> Analysis:
    """Tokenize ``text`` and compute every view's arrays on ``model``.

    The arrays come back read-only: the app caches one Analysis per sentence and
    hands the same object to every session.

    Args:
        recurrent: also roll the step graph (:func:`with_recurrent`; linear models
            with a step graph only). T runs of the step graph: most of a linear
            analysis's time.
        keep: the inspect outputs to keep in ``outputs`` (None: all). The graph is
            asked for these and ``logits`` only; ``probs`` is computed from the logits
            either way. A large model's analysis need not hold ``scores`` (L, H, T, T),
            which only one head at a time is drawn from (:func:`head_scores`), nor its
            logits (T, V) beside ``probs``: GPT-2 small at T = 1024, 604 MB and 206 MB.
        max_tokens: analyse at most this many tokens, fewer than the context (the
            server's budget for an uploaded model's analysis); a notice says so.
        ids: the token ids (T,) to analyse instead of tokenizing ``text``, which then
            only names the sentence (a generated continuation: its ids as generated,
            ``inference.given_ids``); a notice says where the text tokenizes otherwise.

    Raises:
        EmptyInput: if the text has no tokens.
        ValueError: if a given id is outside the model's vocabulary.
    """
    text, notices = clean_text(text)
    given = ids is not None
    if ids is None:
        enc = encode(model.tokenizer, text)
    else:
        enc = given_encoding(model.tokenizer, text, ids, model.config.vocab_size)
        if (again := retokenized_notice(model.tokenizer, text, enc.ids)) is not None:
            notices.append(again)
    if (notice := left_out_notice(enc.left_out)) is not None:
        notices.append(notice)
    if not enc.ids:
        raise EmptyInput("Type a sentence to see its attention.")
    ctx = model.config.context_length
    ids, tokens, unknown = enc.ids, enc.tokens, enc.unknown
    if max_tokens is not None and len(ids) > max_tokens and max_tokens < ctx:
        notices.append(
            f"The sentence has {len(ids)} tokens; this server analyses an uploaded model of "
            f"{model.config.n_layer} layers x {model.config.n_head} heads on at most "
            f"{max_tokens} (its attention grows with the square of the length), so only "
            f"the first {max_tokens} are shown."
        )
        ctx = max_tokens
    elif len(ids) > ctx:
        notices.append(
            f"The sentence has {len(ids)} tokens; the model's context is {ctx}, "
            f"so only the first {ctx} are shown."
        )
    ids, tokens, unknown = ids[:ctx], tokens[:ctx], unknown[:ctx]
    outputs = model.inspect(ids) if keep is None else model.inspect(ids, (*keep, "logits"))
    probs = softmax(outputs["logits"][0])  # (T, V)
    if keep is not None:
        outputs = {name: array for name, array in outputs.items() if name in keep}
    suggestions = suggest(model.tokenizer, enc.unknown_words_before(len(ids)))
    result = Analysis(text, ids, tokens, unknown, suggestions, notices, outputs, probs,
                      given_ids=given)  # fmt: skip
    for array in [*outputs.values(), probs]:
        array.flags.writeable = False  # cached analyses are shared between sessions
    return with_recurrent(model, result) if recurrent else result


def with_recurrent(model: OnnxModel, result: Analysis) -> Analysis:
    """``result`` plus the recurrent form of a linear or delta model: the step graph
    rolled over the same tokens (``state`` (L, H, T, d_head, d_head), ``y`` (L, H, T,
    d_head), ``logits`` (T, V), and the linear model's ``normalizer`` or the delta model's
    convolution window ``conv``) and max |recurrent - parallel| over y, state, the
    normalizer (linear) and logits. The delta model reads out y_t = S_tᵀ q_t.

    Returns a new Analysis sharing ``result``'s arrays (``result`` is not modified),
    or ``result`` itself when the model has no step graph or no feature map.

    Raises:
        ModelRunError: if onnxruntime fails on the step graph.
    """
    outputs = result.outputs
    delta = model.config.attention == "delta" and {"q", "state"} <= set(outputs)
    if not (model.has_step and ("phi_q" in outputs or delta)) or result.recurrent is not None:
        return result
    rec = model.recurrent(result.ids)
    if delta:
        rec["y"] = np.einsum("lhtd,lhtde->lhte", outputs["q"], rec["state"])  # (L, H, T, D)
    else:
        rec["y"] = recurrent_readout(
            outputs["phi_q"], rec["state"], rec["normalizer"], model.config.attn_eps
        )  # (L, H, T, D)
    diffs = [
        np.abs(rec["y"] - outputs["head_out"]).max(),
        np.abs(rec["state"] - outputs["state"]).max(),
        np.abs(rec["logits"] - outputs["logits"][0]).max(),
    ]
    if "normalizer" in rec:
        diffs.append(np.abs(rec["normalizer"] - outputs["normalizer"]).max())
    for array in rec.values():
        array.flags.writeable = False
    return dataclasses.replace(result, recurrent=rec, recurrent_max_diff=float(max(diffs)))


def has_head_scores(result: Analysis) -> bool:
    """Whether :func:`head_scores` can give a head's pre-mask scores: the analysis kept
    them, or the q and k (phi_q and phi_k) they are made of. A foreign ONNX graph's
    analysis has neither."""
    out = result.outputs
    return "scores" in out or {"phi_q", "phi_k"} <= set(out) or {"q", "k"} <= set(out)


def head_scores(result: Analysis, layer: int, head: int) -> np.ndarray:
    """The pre-mask scores (T, T) of one head: the graph's ``scores[layer, head]`` when the
    analysis kept them, else the same product computed from the graph's own outputs of
    that head: QKᵀ/√d_head from ``q`` and ``k`` (softmax), φ(Q)φ(K)ᵀ from ``phi_q`` and
    ``phi_k`` (linear).

    Raises:
        KeyError: an analysis with neither the scores nor what they are made of.
    """
    out = result.outputs
    if "scores" in out:
        return out["scores"][layer, head]  # (T, T)
    if "phi_q" in out:
        return out["phi_q"][layer, head] @ out["phi_k"][layer, head].T  # (T, T)
    q, k = out["q"][layer, head], out["k"][layer, head]  # (T, d_head) each
    return (q @ k.T) / np.float32(np.sqrt(q.shape[-1]))  # (T, T)


def probe_tokens(model: OnnxModel) -> list[int]:
    """Token ids to build probe sequences from (:func:`head_stats.probe_word_ids`): whole
    alphabetic words when the vocabulary has any, else every non-special id, else every
    id below ``vocab_size``. Never empty; sorted."""
    special = {UNK} | {
        a.content for a in model.tokenizer.get_added_tokens_decoder().values() if a.special
    }
    vocab = vocab_of(model.tokenizer)
    return head_stats.probe_word_ids(vocab, model.config.vocab_size, special)


def induction_probe(model: OnnxModel, seed: int = 0) -> np.ndarray:
    """Induction score (L, H) of the model: :func:`head_stats.induction_probe`, the one
    setting the model card also uses (blocks of ``INDUCTION_PERIOD`` random tokens of
    :func:`probe_tokens` repeated twice, averaged over ``INDUCTION_SEQUENCES``).

    Raises:
        ModelRunError: if onnxruntime fails on the probe.
    """

    def attend(ids: list[int]) -> np.ndarray:
        return model.inspect(ids)["attn"]  # (L, H, T, T)

    return head_stats.induction_probe(
        attend, probe_tokens(model), model.config.context_length, seed=seed
    )


def behavioural_probe(model: OnnxModel) -> dict | None:
    """The behavioural induction score of the whole model (``behaviour.behavioural_induction``,
    the model card's setting: blocks of 24 random whole words repeated twice, from the
    logits alone; Olsson et al. 2022), with the block cut to fit a short context. None
    when the context or the vocabulary has no room for a block of 2.

    Raises:
        ModelRunError: if onnxruntime fails on the probe.
    """
    words = behaviour.word_ids(vocab_of(model.tokenizer))
    words = [i for i in words if i < model.config.vocab_size] or probe_tokens(model)
    period = min(behaviour.INDUCTION_PERIOD, model.config.context_length // 2, len(words))
    if period < 2:
        return None
    return behaviour.behavioural_induction(model.logits, words, period=period)


MAX_PE_POSITIONS = 128  # the curves cover the context, up to this many positions


def positional_encoding(model: OnnxModel) -> np.ndarray:
    """The model's own ``pos_enc`` (P, C) over P = min(context, 128) positions.

    Read from the inspect graph run on P copies of token 0 (the encoding does not
    depend on the tokens), so learned position embeddings show as they were trained.
    """
    P = min(model.config.context_length, MAX_PE_POSITIONS)
    return model.inspect([0] * P)["pos_enc"]  # (P, C)


def head_table(
    result: Analysis, induction: np.ndarray | None = None, signed: bool = False
) -> pd.DataFrame | None:
    """Per-head statistics on this sentence plus (optionally) the induction probe's
    scores (L, H); None for a one-token sentence (no previous token to score).

    ``signed``: the weights can be negative (the delta model's implied matrix), so the
    statistics, which read rows as distributions, are taken on |weight| divided by the
    row's sum of |weight| (each earlier token's share of the row in magnitude).
    """
    if result.T < 2:
        return None
    attn = result.outputs["attn"]  # (L, H, T, T)
    if signed:
        size = np.abs(attn)  # (L, H, T, T)
        attn = size / np.maximum(size.sum(axis=-1, keepdims=True), 1e-12)
    return head_stats.head_stats_table(attn, induction=induction)
