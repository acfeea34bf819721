"""Translate with the exported encoder-decoders (no torch): greedy decoding, step by step.

``load_translator(folder, kind)`` opens ``seq2seq_<kind>.*.onnx`` (``export/seq2seq.py``);
``decode`` runs the encoder once and the step graph once per output word, either on its
own previous word (free running, how a model translates) or on the gold previous word
(teacher forcing, how it was trained), and records at each step what the lesson shows:
the attention over the source words, the context vector, the chosen word and its
probability. ``translate_text`` is the one path from typed text to a translation (the
app, the model card and the bench all call it). ``inspect`` runs the transformer's inspect graph for its self-attention.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from inference.analysis import softmax
from inference.sessions import ModelRunError, make_session, short_error
from models.seq2seq.config import Seq2SeqConfig
from models.seq2seq.vocab import BOS_ID, EOS_ID, UNK_ID, encode_words


@dataclass
class Translator:
    """One exported translation model.

    Attributes:
        config: its :class:`~models.seq2seq.config.Seq2SeqConfig`.
        src_tokenizer, tgt_tokenizer: the word vocabularies.
        sessions: graph role (``encoder``, ``step``, ``inspect``) -> onnxruntime session.
    """

    config: Seq2SeqConfig
    src_tokenizer: Tokenizer
    tgt_tokenizer: Tokenizer
    sessions: dict

    def run(self, role: str, feed: dict) -> list[np.ndarray]:
        """Run graph ``role`` on the inputs it declares (the Bahdanau step graph has no
        ``context0``: the exporter drops an input a graph does not read).

        Raises:
            ModelRunError: onnxruntime failed on this input.
        """
        session = self.sessions[role]
        names = {i.name for i in session.get_inputs()}
        try:
            return session.run(None, {k: v for k, v in feed.items() if k in names})
        except Exception as exc:  # onnxruntime's error types derive from Exception only
            raise ModelRunError(short_error(str(exc))) from exc


def load_translator(folder: Path, kind: str) -> Translator:
    """Open ``folder/seq2seq_<kind>.{encoder,step[,inspect]}.onnx``.

    Raises:
        FileNotFoundError: a graph is missing. ValueError: its metadata is not ours.
    """
    sessions = {}
    for role in ("encoder", "step", "inspect"):
        path = folder / f"seq2seq_{kind}.{role}.onnx"
        if path.exists():
            sessions[role] = make_session(path)
        elif role != "inspect":
            raise FileNotFoundError(path)
    meta = dict(sessions["encoder"].get_modelmeta().custom_metadata_map)
    cfg = Seq2SeqConfig.from_json(meta["config"])
    src, tgt = (Tokenizer.from_str(meta[k]) for k in ("src_tokenizer", "tgt_tokenizer"))
    return Translator(cfg, src, tgt, sessions)


@dataclass
class Step:
    """One output position t of a decoding.

    Attributes:
        fed: the target word read at this step (``<bos>`` first).
        word: the word the model picks (argmax), ``<eos>`` to stop.
        prob: the model's probability of ``word``.
        gold: the gold word at t (teacher forcing and when a gold translation is known).
        attention: (S,) RNN: Bahdanau's weights over the source (zeros for ``gru``);
            transformer: (L, H, S) every cross-attention head's weights.
        context: (d,) the context vector the step read (RNN kinds), else None.
        query: what asked where to look: the decoder's previous state s_{t-1} (d,) for
            the RNNs, every cross-attention head's query (L, H, d_head) for the
            transformer.
    """

    fed: str
    word: str
    prob: float
    attention: np.ndarray
    gold: str | None = None
    context: np.ndarray | None = None
    query: np.ndarray | None = None


@dataclass
class Decoding:
    """A translation: the source words (``<eos>`` last) and one :class:`Step` per output."""

    source: list[str]
    steps: list[Step] = field(default_factory=list)

    @property
    def words(self) -> list[str]:
        """The output words before ``<eos>``."""
        return [s.word for s in self.steps if s.word != "<eos>"]

    @property
    def finished(self) -> bool:
        """Whether the model wrote ``<eos>``; False when it stopped at ``max_len``."""
        return bool(self.steps) and self.steps[-1].word == "<eos>"

    def row_labels(self) -> list[str]:
        """One label per step, the word it picked: :attr:`words`, then ``<eos>`` only
        when the model wrote it (a decoding cut at ``max_len`` has none)."""
        return [s.word for s in self.steps]

    def attention(self) -> np.ndarray:
        """The steps' attention stacked: (T, S) for the RNNs, (L, H, T, S) for the
        transformer (row t: where output t looked)."""
        stacked = np.stack([s.attention for s in self.steps])  # (T, S) or (T, L, H, S)
        return stacked if stacked.ndim == 2 else stacked.transpose(1, 2, 0, 3)


@dataclass
class Source:
    """A typed English sentence as the models read it.

    Attributes:
        words: the words fed to the encoder (lowercased, punctuation split off, cut to
            the encoder's context).
        notices: every change made to the text, one sentence each.
        unknown: word -> up to 3 closest words of the lexicon, for words the source
            vocabulary lacks (they are read as ``<unk>``).
    """

    words: list[str]
    notices: list[str]
    unknown: dict[str, list[str]]


WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*|\d+|[^\w\s]")


def read_source(model: Translator, text: str) -> Source:
    """Split ``text`` into the words the source vocabulary holds: lowercase, each
    punctuation mark its own word, at most ``max_src - 1`` words (``<eos>`` is the last
    source token). Every change is stated in ``notices``."""
    words = WORD.findall(text.lower()[:2000])
    notices = []
    if words and " ".join(words) != " ".join(text.split()):
        notices.append(f"Read as: “{' '.join(words)}” (lowercase, punctuation split off).")
    room = model.config.max_src - 1
    if len(words) > room:
        notices.append(
            f"The sentence has {len(words)} words; the encoder's context is {room} words "
            f"and <eos>, so only the first {room} are translated."
        )
        words = words[:room]
    vocab = [w for w in model.src_tokenizer.get_vocab() if not w.startswith("<")]
    unknown = {
        w: difflib.get_close_matches(w, vocab, n=3)
        for w in dict.fromkeys(words)
        if w not in model.src_tokenizer.get_vocab()
    }
    return Source(words, notices, unknown)


def source_ids(model: Translator, words: list[str]) -> list[int]:
    """Ids of the source words (``<unk>`` for a word the vocabulary lacks; :func:`read_source`
    lists those) followed by ``<eos>``."""
    return encode_words(model.src_tokenizer, words)


def _encode(model: Translator, src: np.ndarray) -> dict:
    """The encoder run once: what every decoder step reads (``src`` (1, S))."""
    if model.config.kind == "transformer":
        _, cross_k, cross_v = model.run("encoder", {"src_ids": src})  # (L, 1, H, S, d_head)
        return {"cross_k": cross_k, "cross_v": cross_v}
    memory, hidden = model.run("encoder", {"src_ids": src})  # (1, S, d), (N, 1, d)
    return {"memory": memory, "hidden": hidden, "context0": hidden[-1]}


def _step(model: Translator, state: dict, fed: list[int]) -> tuple:
    """One decoder step after the words ``fed`` so far: ``(logits (V,), attention,
    context, query)`` (shapes as in :class:`Step`); ``state`` is updated in place."""
    if model.config.kind == "transformer":
        feed = {"tgt_ids": np.asarray([fed], np.int64), **state}
        logits, attn, query = model.run("step", feed)  # (1, V), (L, H, S), (L, H, d_head)
        return logits[0], attn, None, query
    query = state["hidden"][-1, 0]  # (d,): s_{t-1}, the query of Bahdanau's attention
    feed = {"token": np.asarray(fed[-1:], np.int64), **state}
    logits, state["hidden"], attn, ctx = model.run("step", feed)  # (1, V), (N, 1, d), (1, S)
    return logits[0], attn[0], ctx[0], query


MAX_LEN = 40  # output positions a free-running decoding takes at most (``<eos>`` included)


def decode(
    model: Translator, words: list[str], max_len: int = MAX_LEN, gold: list[str] | None = None,
    teacher: bool = False,
) -> Decoding:  # fmt: skip
    """Greedy decoding of the English ``words``, step by step.

    Args:
        max_len: output positions at most (``<eos>`` included).
        gold: the gold translation, recorded beside each step when known.
        teacher: feed the gold previous word (teacher forcing; needs ``gold``) instead
            of the model's own.

    Raises:
        ValueError: ``teacher`` without ``gold``. ModelRunError: onnxruntime failed.
    """
    if teacher and gold is None:
        raise ValueError("teacher forcing needs the gold translation")
    state = _encode(model, np.asarray([source_ids(model, words)], np.int64))  # (1, S)
    vocab, words_of = model.tgt_tokenizer.get_vocab(), model.tgt_tokenizer.id_to_token
    gold_ids = None if gold is None else [vocab.get(w, UNK_ID) for w in gold] + [EOS_ID]
    out, fed = Decoding(words + ["<eos>"]), [BOS_ID]
    for t in range(len(gold_ids) if teacher else max_len):
        logits, attention, context, query = _step(model, state, fed)
        probs = softmax(logits)  # (V,)
        best = int(np.argmax(probs))
        truth = words_of(gold_ids[t]) if gold_ids and t < len(gold_ids) else None
        out.steps.append(Step(words_of(fed[-1]), words_of(best), float(probs[best]),
                              attention, truth, context, query))  # fmt: skip
        if not teacher and best == EOS_ID:
            break
        fed.append(gold_ids[t] if teacher else best)
    return out


@dataclass
class Translation:
    """A typed sentence translated: how it was read (:class:`Source`) and the decoding."""

    source: Source
    decoding: Decoding


def translate_text(
    model: Translator, text: str, max_len: int = MAX_LEN, gold: list[str] | None = None,
    teacher: bool = False,
) -> Translation:  # fmt: skip
    """The one path from English text to a translation, used by the app, the model card's
    evaluation and the bench: :func:`read_source` (lowercase, punctuation split off, cut to
    ``max_src - 1`` words, every change in ``source.notices``), then :func:`decode`.

    Args and raises as :func:`decode`.
    """
    source = read_source(model, text)
    return Translation(source, decode(model, source.words, max_len, gold, teacher))


def inspect(model: Translator, words: list[str], target: list[str]) -> dict[str, np.ndarray]:
    """The transformer's named tensors for a source and a target prefix (``<bos>`` is
    prepended): ``enc_self_attn`` (L, H, S, S), ``dec_self_attn`` (L, H, T, T),
    ``cross_attn`` (L, H, T, S), ...

    Raises:
        RuntimeError: for an RNN model (no inspect graph). ModelRunError: onnxruntime.
    """
    if "inspect" not in model.sessions:
        raise RuntimeError(f"the {model.config.kind} model has no inspect graph")
    src = np.asarray([source_ids(model, words)], np.int64)  # (1, S)
    vocab = model.tgt_tokenizer.get_vocab()
    tgt = np.asarray([[BOS_ID] + [vocab.get(w, UNK_ID) for w in target]], np.int64)  # (1, T)
    session = model.sessions["inspect"]
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, model.run("inspect", {"src_ids": src, "tgt_ids": tgt}), strict=True))
