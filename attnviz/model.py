"""A model and a sentence's arrays for a notebook: the app's own analysis, named.

Symbols: L layers, H heads, T tokens, V vocabulary size, C = d_model, D = d_head = C / H.
Every array is float32 numpy, read-only (the app's analysis shares them), and exactly what
the app draws: ``Sentence.analysis`` is the :class:`inference.analysis.Analysis` that
``inference.analysis.analyze`` returns, the one the app's views are built from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from inference.analysis import Analysis, analyze, induction_probe, positional_encoding
from inference.block import has_block_outputs
from inference.predictions import TokenTexts
from inference.text_input import visible
from models.config import ModelConfig


@dataclass
class Model:
    """A loaded model (:func:`attnviz.load`) and what the views read of it besides a
    sentence (the app's ``inference.view_specs.ModelFacts``), each computed once.

    Attributes:
        runnable: the model the app runs (``inference.runtime.OnnxModel``, or an
            ``upload.isolated.IsolatedModel`` for a foreign ONNX graph).
        name: its key in figure titles (``softmax``, ``gpt2``, a file's stem).
    """

    runnable: object
    name: str

    @property
    def config(self) -> ModelConfig:
        """Its sizes and kind: ``n_layer`` (L), ``n_head`` (H), ``d_model`` (C),
        ``d_head`` (D), ``vocab_size`` (V), ``context_length`` (tokens), ``attention``."""
        return self.runnable.config

    @property
    def tokenizer(self):
        """Its ``tokenizers.Tokenizer``."""
        return self.runnable.tokenizer

    @cached_property
    def vocab(self) -> TokenTexts:
        """Every id's token as the app draws it (whitespace visible: ␣, ⏎), (V,)."""
        return TokenTexts(self.runnable, visible)

    @cached_property
    def pos_enc(self) -> np.ndarray:
        """Its positional encoding (P, C), P = min(context, 128) positions."""
        return positional_encoding(self.runnable)

    @cached_property
    def induction(self) -> np.ndarray:
        """The induction probe's score of every head (L, H), in [0, 1]: the attention a
        head pays to the token after the earlier copy of the current one."""
        return induction_probe(self.runnable)

    def analyse(self, text: str) -> Sentence:
        """``text`` analysed as the app analyses it (cleaned, tokenized, cut to the
        context; one run of the inspect graph; a recurrent model's step graph rolled
        too): :func:`inference.analysis.analyze`.

        Raises:
            inference.text_input.EmptyInput: text without a token.
            inference.sessions.ModelRunError: onnxruntime failed on it.
        """
        return Sentence(self, analyze(self.runnable, text))

    def __repr__(self) -> str:
        c = self.config
        return (f"Model({self.name!r}: {c.attention} attention, L={c.n_layer} layers x "
                f"H={c.n_head} heads, d_model={c.d_model}, d_head={c.d_head}, "
                f"V={c.vocab_size}, context={c.context_length})")  # fmt: skip


@dataclass
class Sentence:
    """One sentence's arrays on one model, named as in the field (docs/glossary.md).

    Attributes:
        model: the :class:`Model` it was run on.
        analysis: the app's :class:`inference.analysis.Analysis` (every view's input).
    """

    model: Model
    analysis: Analysis
    _residual: np.ndarray | None = field(default=None, repr=False)

    @property
    def text(self) -> str:
        """The cleaned text that was tokenized."""
        return self.analysis.text

    @property
    def ids(self) -> list[int]:
        """Token ids (T,)."""
        return self.analysis.ids

    @property
    def tokens(self) -> list[str]:
        """Tokens as the app draws them (T,): whitespace visible, unknown words' pieces
        ending in ``*``."""
        return self.analysis.display_tokens

    @property
    def T(self) -> int:
        """Number of tokens."""
        return self.analysis.T

    @property
    def notices(self) -> list[str]:
        """What the app would say about the input (cut to the context, unknown words)."""
        return self.analysis.notices

    def _out(self, name: str) -> np.ndarray:
        try:
            return self.analysis.outputs[name]
        except KeyError:
            raise KeyError(f"{self.model.name}'s graph has no {name!r} output") from None

    @property
    def attention(self) -> np.ndarray:
        """Attention weights (L, H, T, T): row = query, column = key, rows sum to 1
        (softmax); linear: φ(q)·φ(k) normalised; delta: the signed implied weights."""
        return self._out("attn")

    @property
    def scores(self) -> np.ndarray:
        """Pre-mask scores (L, H, T, T): QKᵀ/√D (softmax), φ(Q)φ(K)ᵀ (linear)."""
        return self._out("scores")

    @property
    def q(self) -> np.ndarray:
        """Queries (L, H, T, D)."""
        return self._out("q")

    @property
    def k(self) -> np.ndarray:
        """Keys (L, H, T, D)."""
        return self._out("k")

    @property
    def v(self) -> np.ndarray:
        """Values (L, H, T, D)."""
        return self._out("v")

    @property
    def head_out(self) -> np.ndarray:
        """Each head's output z = attention · V (L, H, T, D), before W_O."""
        return self._out("head_out")

    @property
    def logits(self) -> np.ndarray:
        """Next-token logits at every position (T, V), nats (log-probability + const)."""
        return self._out("logits")[0]

    @property
    def probs(self) -> np.ndarray:
        """Next-token probabilities at every position (T, V): softmax of the logits."""
        return self.analysis.probs

    @property
    def residual(self) -> np.ndarray:
        """The residual stream (L+1, T, C): the input of each block l < L (embedding +
        position for l = 0), then the output of the last block (before the final
        LayerNorm). The inspect graph's own block outputs, one more run of it.

        Raises:
            LookupError: a graph without block outputs (a foreign or older one).
        """
        if self._residual is None:
            runnable, L = self.model.runnable, self.model.config.n_layer
            if not has_block_outputs(runnable):
                raise LookupError(f"{self.model.name}: its graph has no block outputs")
            names = [f"blocks.{i}.resid_pre" for i in range(L)] + [f"blocks.{L - 1}.resid_post"]
            got = runnable.inspect(self.ids, tuple(names))
            self._residual = np.stack([got[n].reshape(self.T, -1) for n in names])  # (L+1,T,C)
            self._residual.flags.writeable = False
        return self._residual

    def arrays(self) -> dict[str, np.ndarray]:
        """Every named array of the inspect graph for this sentence (``models/contract.py``:
        ``attn``, ``scores``, ``q``, ``k``, ``v``, ``head_out``, ``pos_enc`` (T, C), a
        linear model's ``phi_q``, ``phi_k``, ``state`` (L, H, T, D, D), ``normalizer``),
        with ``logits`` (T, V), ``probs`` (T, V) and, where the graph has them, the
        ``residual`` stream (L+1, T, C)."""
        out = {n: a for n, a in self.analysis.outputs.items() if n != "logits"}
        out |= {"logits": self.logits, "probs": self.probs}
        if has_block_outputs(self.model.runnable):
            out["residual"] = self.residual
        return out

    def __repr__(self) -> str:
        c = self.model.config
        return (f"Sentence({self.text!r} on {self.model.name}: T={self.T} tokens; attention "
                f"({c.n_layer}, {c.n_head}, {self.T}, {self.T}))")  # fmt: skip
