"""The configuration of an encoder-decoder translation model: one frozen dataclass."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields

# The three models of the lesson, in the order the lesson walks them.
SEQ2SEQ_KINDS = ("gru", "bahdanau", "transformer")


@dataclass(frozen=True)
class Seq2SeqConfig:
    """Hyper-parameters of an encoder-decoder.

    Attributes:
        kind: ``"gru"`` (RNN encoder-decoder, the context is the encoder's last state;
            c read at every decoder step as in Cho et al. 2014), ``"bahdanau"`` (the same with
            additive attention; Bahdanau et al. 2015) or ``"transformer"`` (encoder
            self-attention, decoder masked self-attention and cross-attention; Vaswani
            et al. 2017).
        src_vocab, tgt_vocab: source and target vocabulary sizes (ids).
        d_model: embedding and hidden width (the GRU's hidden size, the transformer's C).
        n_layer: GRU layers, or transformer layers in the encoder and in the decoder.
        n_head: transformer heads (1 for the RNNs).
        d_mlp: the transformer's MLP width.
        max_src, max_tgt: the longest source and target sequences (tokens, ``<eos>``
            included) the app feeds; the transformer's positional encoding is
            sinusoidal, so it is defined beyond them.

    Raises:
        ValueError: an unknown kind, a non-positive size, or ``d_model`` not divisible by
            ``n_head``.
    """

    kind: str
    src_vocab: int
    tgt_vocab: int
    d_model: int = 64
    n_layer: int = 1
    n_head: int = 1
    d_mlp: int = 128
    max_src: int = 24
    max_tgt: int = 32

    def __post_init__(self) -> None:
        if self.kind not in SEQ2SEQ_KINDS:
            raise ValueError(f"kind must be one of {SEQ2SEQ_KINDS}, got {self.kind!r}")
        for name in ("src_vocab", "tgt_vocab", "d_model", "n_layer", "n_head", "d_mlp"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.d_model % self.n_head:
            raise ValueError(f"d_model={self.d_model} is not divisible by n_head={self.n_head}")

    @property
    def d_head(self) -> int:
        """Width of one head: d_model // n_head."""
        return self.d_model // self.n_head

    def to_json(self) -> str:
        """The fields as compact JSON with sorted keys (checkpoint and ONNX metadata)."""
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Seq2SeqConfig:
        """Parse :meth:`to_json` output (unknown keys ignored).

        Raises:
            ValueError: invalid JSON or a field ``__post_init__`` refuses.
        """
        data = json.loads(text)
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})
