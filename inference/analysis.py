"""From a typed sentence to every number the app shows (no torch, no Streamlit).

``analyze(model, text)`` tokenizes, truncates to the context length, runs the
inspect graph once and, for linear attention, rolls the recurrent step graph
over the same tokens to measure max |recurrent - parallel| (``with_recurrent``;
the app asks for it only in the view that shows it). The app renders
the returned :class:`Analysis`; the benchmarks time this function.
"""

from __future__ import annotations

import dataclasses
import time
import unicodedata
from collections import Counter
from dataclasses import dataclass

import numpy as np
import pandas as pd

from inference import head_stats
from inference.runtime import OnnxModel
from models.tokenizer import UNK, encode, token_text
from models.word_index import word_index

MAX_CHARS = 2_000
# Unknown-word suggestions: for the first SUGGESTED_WORDS unknown words shown (what the page
# lists), while the request has spent less than SUGGEST_BUDGET_S seconds on them.
SUGGESTED_WORDS = 12
SUGGEST_BUDGET_S = 0.3
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

    @property
    def T(self) -> int:
        return len(self.ids)

    @property
    def display_tokens(self) -> list[str]:
        """Tokens as drawn: pieces of unknown words end in ``*``; whitespace and control
        characters are made visible (:func:`visible`: ``␣``, ``⏎``, ``⇥``, ``\\xNN``)."""
        shown = [visible(t) for t in self.tokens]
        return [t + ("*" if u else "") for t, u in zip(shown, self.unknown, strict=True)]


_SHOWN = {" ": "␣", "\n": "⏎", "\t": "⇥"}


def visible(token: str) -> str:
    """``token`` as drawn wherever a token is shown: a space as ``␣``, a newline as
    ``⏎``, a tab as ``⇥``, any other control character as ``\\xNN`` (``\\uNNNN``
    above 0xff), the empty string as ``∅``; everything else as it is."""
    out = []
    for ch in token:
        if ch in _SHOWN:
            out.append(_SHOWN[ch])
        elif unicodedata.category(ch) == "Cc":
            out.append(ch.encode("unicode_escape").decode("ascii"))
        else:
            out.append(ch)
    return "".join(out) or "∅"


class EmptyInput(ValueError):
    """The text has no tokens (empty or whitespace-only)."""


def clean_text(text: str) -> tuple[str, list[str]]:
    """Cut to ``MAX_CHARS`` and drop invisible control characters; newlines and tabs
    stay (a character model reads them as tokens). Returns (text, notices): every change
    is stated."""
    notices = []
    if len(text) > MAX_CHARS:
        notices.append(f"Input cut to its first {MAX_CHARS:,} of {len(text):,} characters.")
        text = text[:MAX_CHARS]
    kept = "".join(
        ch for ch in text if ch in "\t\n" or not unicodedata.category(ch).startswith("C")
    )
    if len(kept) != len(text):
        notices.append(f"Removed {len(text) - len(kept)} invisible control character(s).")
    return kept, notices


def left_out_notice(left_out: list[str]) -> str | None:
    """The notice for characters a character vocabulary lacks, or None when there are none:
    each distinct character as drawn (:func:`visible`), with its count."""
    if not left_out:
        return None
    counts = Counter(left_out)
    shown = ", ".join(
        f"“{visible(ch)}”" + (f" ×{n}" if n > 1 else "") for ch, n in list(counts.items())[:20]
    )
    more = f" and {len(counts) - 20} more" if len(counts) > 20 else ""
    return (
        f"Left out {len(left_out)} character(s) the model's vocabulary does not have: "
        f"{shown}{more}."
    )


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

    Raises:
        EmptyInput: if the text has no tokens.
    """
    text, notices = clean_text(text)
    enc = encode(model.tokenizer, text)
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
    result = Analysis(text, ids, tokens, unknown, suggestions, notices, outputs, probs)
    for array in [*outputs.values(), probs]:
        array.flags.writeable = False  # cached analyses are shared between sessions
    return with_recurrent(model, result) if recurrent else result


def suggest(tokenizer, words: list[str]) -> dict[str, list[str]]:
    """Every word of ``words`` (unknown words shown) -> up to 3 closest known words, found
    for the first ``SUGGESTED_WORDS`` of them until ``SUGGEST_BUDGET_S`` seconds are spent
    (the others get none): the cost of a request does not grow with its unknown words nor,
    past the one-off index (``models.tokenizer.word_index``), with the vocabulary."""
    out: dict[str, list[str]] = dict.fromkeys(words, [])
    if not out:
        return out
    index = word_index(tokenizer)
    start = time.monotonic()
    for word in list(out)[:SUGGESTED_WORDS]:
        if time.monotonic() - start > SUGGEST_BUDGET_S:
            break
        out[word] = index.closest(word)
    return out


def with_recurrent(model: OnnxModel, result: Analysis) -> Analysis:
    """``result`` plus the linear model's recurrent form: the step graph rolled over
    the same tokens (``state`` (L, H, T, d_head, d_head), ``normalizer``, ``y`` (L, H, T,
    d_head), ``logits`` (T, V)) and max |recurrent - parallel| over y, state,
    normalizer and logits.

    Returns a new Analysis sharing ``result``'s arrays (``result`` is not modified),
    or ``result`` itself when the model has no step graph or no feature map.

    Raises:
        ModelRunError: if onnxruntime fails on the step graph.
    """
    outputs = result.outputs
    if not (model.has_step and "phi_q" in outputs) or result.recurrent is not None:
        return result
    rec = model.recurrent(result.ids)
    rec["y"] = recurrent_readout(
        outputs["phi_q"], rec["state"], rec["normalizer"], model.config.eps
    )  # (L, H, T, D)
    diffs = [
        np.abs(rec["y"] - outputs["head_out"]).max(),
        np.abs(rec["state"] - outputs["state"]).max(),
        np.abs(rec["normalizer"] - outputs["normalizer"]).max(),
        np.abs(rec["logits"] - outputs["logits"][0]).max(),
    ]
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


def top_next_columns(probs: np.ndarray, vocab: list[str], k: int) -> dict[str, list]:
    """The ``k`` most likely next tokens at every position, most likely first (ties in
    id order), as table columns ``#r next`` and ``p #r`` for r = 1 .. k.

    Each row's k-th largest probability is found by partition (O(V)); only the ids at or
    above it are sorted, so GPT-2's (1024, 50257) takes a fraction of a second, not the
    4 s of sorting every row.

    Args:
        probs: (T, V) next-token probabilities; vocab: id -> token string (>= V entries).

    Returns:
        Column name -> T values (token strings, probabilities as float).
    """
    top = _top_ids(probs, k)  # (T, k) most likely next ids
    columns: dict[str, list] = {}
    for r in range(top.shape[1]):
        columns[f"#{r + 1} next"] = [vocab[int(i)] for i in top[:, r]]
        columns[f"p #{r + 1}"] = [float(probs[t, i]) for t, i in enumerate(top[:, r])]
    return columns


def _top_ids(probs: np.ndarray, k: int) -> np.ndarray:
    """(T, min(k, V)) ids of each row's largest values, largest first, ties in id order:
    the first k of a stable ``argsort(-probs)``."""
    T, V = probs.shape
    k = min(k, V)
    kth = np.partition(probs, V - k, axis=1)[:, V - k]  # (T,) each row's k-th largest
    top = np.empty((T, k), dtype=np.int64)
    for t in range(T):
        ids = np.flatnonzero(probs[t] >= kth[t])  # (>= k,) in id order
        top[t] = ids[np.argsort(-probs[t, ids], kind="stable")[:k]]
    return top


def id_to_token(model: OnnxModel) -> list[str]:
    """The text of every id (index = id; byte-level BPE tokens decoded, ``token_text``);
    an id no token maps to (a padded vocabulary's extra rows) as ``[id N]``."""
    vocab = model.tokenizer.get_vocab()
    out = [f"[id {i}]" for i in range(max(model.config.vocab_size, len(vocab)))]
    for token, i in vocab.items():
        out[i] = token_text(model.tokenizer, token)
    return out


def probe_tokens(model: OnnxModel) -> list[int]:
    """Token ids to build probe sequences from (:func:`head_stats.probe_word_ids`): whole
    alphabetic words when the vocabulary has any, else every non-special id, else every
    id below ``vocab_size``. Never empty; sorted."""
    special = {UNK} | {
        a.content for a in model.tokenizer.get_added_tokens_decoder().values() if a.special
    }
    vocab = model.tokenizer.get_vocab()
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


MAX_PE_POSITIONS = 128  # the curves cover the context, up to this many positions


def positional_encoding(model: OnnxModel) -> np.ndarray:
    """The model's own ``pos_enc`` (P, C) over P = min(context, 128) positions.

    Read from the inspect graph run on P copies of token 0 (the encoding does not
    depend on the tokens), so learned position embeddings show as they were trained.
    """
    P = min(model.config.context_length, MAX_PE_POSITIONS)
    return model.inspect([0] * P)["pos_enc"]  # (P, C)


def head_table(result: Analysis, induction: np.ndarray | None = None) -> pd.DataFrame | None:
    """Per-head statistics on this sentence plus (optionally) the induction probe's
    scores (L, H); None for a one-token sentence (no previous token to score)."""
    if result.T < 2:
        return None
    return head_stats.head_stats_table(result.outputs["attn"], induction=induction)
