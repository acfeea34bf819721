"""What a foreign ONNX language model takes, and what the app feeds it (worker side).

Exporters write a language model's inputs under Hugging Face's names; each is told by
its name and type and fed what a single sentence without padding needs:

* the token ids (the one integer input not named below), (batch, T) or (T);
* ``attention_mask``: 1 for every token, 0 for padding;
* ``position_ids``: 0 .. T−1;
* ``token_type_ids``: 0;
* past keys and values (``past_key_values.0.key`` …, float): an empty past, its one
  dynamic axis besides the batch (the past length) 0.

A graph with a fixed token axis (``fixed_T``) gets every sentence padded after its end
with the tokenizer's pad or end-of-text id (:func:`pad_token`), masked out where the
graph has an ``attention_mask``; ``upload/onnx_foreign.py`` shows only the sentence's
own tokens and measures whether the padding changes them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np
import onnx

from inference.sessions import ModelRunError
from upload.errors import UploadError


class PaddedModel(Protocol):
    """What :func:`padding_note` uses of a foreign graph (``upload.onnx_foreign.ForeignModel``)."""

    inputs: GraphInputs
    config: object

    def inspect(self, ids: list[int]) -> dict[str, np.ndarray]: ...


_DTYPES = {
    onnx.TensorProto.INT64: "int64",
    onnx.TensorProto.INT32: "int32",
    onnx.TensorProto.FLOAT: "float32",
    onnx.TensorProto.FLOAT16: "float16",
    onnx.TensorProto.DOUBLE: "float64",
    onnx.TensorProto.BOOL: "bool",
}
_INTS = ("int64", "int32")
_FLOATS = ("float32", "float16", "float64")
# role -> (words in a lowercase input name, element types allowed)
_ROLES = {
    "mask": (("mask",), (*_INTS, *_FLOATS, "bool")),
    "positions": (("position",), _INTS),
    "zeros": (("token_type",), _INTS),
    "past": (("past", "cache"), _FLOATS),
}
PAD_WORDS = ("pad",)  # special tokens used to pad, in order of preference
EOS_WORDS = ("endoftext", "eos", "</s>", "end")


@dataclass(frozen=True)
class GraphInput:
    """One graph input: ``name``, ``role`` ("ids", "mask", "positions", "zeros",
    "past"), numpy ``dtype`` and ``dims`` (an int per fixed axis, None per dynamic one)."""

    name: str
    role: str
    dtype: str
    dims: tuple[int | None, ...]


@dataclass(frozen=True)
class GraphInputs:
    """Every input of a foreign graph and how to feed it one sentence.

    Attributes:
        ids: the token-id input. others: the rest, graph order. fixed_T: the static
        token axis (ids, mask or positions), or None. pad_id, pad_text: what pads a
        sentence to ``fixed_T`` (:func:`pad_token`).
    """

    ids: GraphInput
    others: tuple[GraphInput, ...] = ()
    fixed_T: int | None = None
    pad_id: int = 0
    pad_text: str = ""

    @property
    def mask(self) -> GraphInput | None:
        """The attention-mask input, or None."""
        return next((i for i in self.others if i.role == "mask"), None)

    def feed(self, ids: list[int] | np.ndarray) -> dict[str, np.ndarray]:
        """The feed for one sentence of ``n`` token ids, padded to ``fixed_T``.

        Returns: input name -> array: ids (1, T) or (T), mask 1 on the sentence and 0
        on padding, positions 0..T−1, token types 0, past (1, …, 0, …) of zeros.
        """
        n = len(ids)
        T = self.fixed_T or n
        tokens = np.full(T, self.pad_id, dtype=np.int64)  # (T,)
        tokens[:n] = ids
        real = np.arange(T) < n  # (T,)
        values = {"ids": tokens, "mask": real, "positions": np.arange(T), "zeros": 0 * tokens}
        feed = {}
        for item in (self.ids, *self.others):
            if item.role == "past":
                shape = [0 if d is None else d for d in item.dims]
                shape[0] = 1  # batch
                feed[item.name] = np.zeros(shape, item.dtype)
                continue
            array = values[item.role].astype(item.dtype)  # (T,)
            feed[item.name] = array if len(item.dims) == 1 else array[None, :]  # (1, T)
        return feed

    def fed_note(self) -> str | None:
        """The card's line on what was fed besides the token ids, or None."""
        said = {
            "mask": "{} = 1 for every token",
            "positions": "{} = 0 … T−1",
            "zeros": "{} = 0",
        }
        parts = [said[i.role].format(i.name) for i in self.others if i.role in said]
        past = [i.name for i in self.others if i.role == "past"]
        if past:
            which = f"{len(past)} inputs such as {past[0]}" if len(past) > 1 else past[0]
            parts.append(f"an empty past ({which}, length 0)")
        if not parts:
            return None
        return f"Fed with the token ids ({self.ids.name}): {'; '.join(parts)}."


def _info(value: onnx.ValueInfoProto, name: str) -> tuple[str, tuple[int | None, ...]]:
    ttype = value.type.tensor_type
    if not value.type.HasField("tensor_type") or not ttype.HasField("shape"):
        raise UploadError(f"{name}: its input '{value.name}' is not a tensor of known rank")
    if ttype.elem_type not in _DTYPES:
        raise UploadError(
            f"{name}: its input '{value.name}' has an element type the app cannot feed"
        )
    dims = tuple(d.dim_value if d.HasField("dim_value") else None for d in ttype.shape.dim)
    return _DTYPES[ttype.elem_type], dims


def _role(input_name: str, dtype: str) -> str | None:
    low = input_name.lower()
    for role, (words, dtypes) in _ROLES.items():
        if any(w in low for w in words) and dtype in dtypes:
            return role
    return "ids" if dtype in _INTS else None


def _check_dims(item: GraphInput, name: str) -> int | None:
    """The fixed token length an input declares (None: dynamic); refuses bad ranks."""
    if item.role == "past":
        free = [d for d in item.dims[1:] if d is None]
        if len(item.dims) < 3 or len(free) != 1:
            raise UploadError(
                f"{name}: its past input '{item.name}' {list(item.dims)} needs exactly one "
                "dynamic axis besides the batch (the past length) to be fed an empty past"
            )
        return None
    if len(item.dims) not in (1, 2):
        raise UploadError(f"{name}: its input '{item.name}' is not of shape (batch, T) or (T)")
    if len(item.dims) == 2 and item.dims[0] not in (None, 1):
        raise UploadError(
            f"{name}: its input '{item.name}' has a fixed batch of {item.dims[0]}; "
            "export it with batch 1 or a dynamic batch"
        )
    if item.dims[-1] is not None and item.dims[-1] < 1:
        raise UploadError(f"{name}: its input '{item.name}' has no tokens")
    return item.dims[-1]


def graph_inputs(model: onnx.ModelProto, name: str, spec: dict) -> GraphInputs:
    """The graph's inputs, each given a role (module docstring), and the pad token.

    Raises:
        UploadError: no token-id input or several, an input of another kind ("its input
            'x' (float32) is not one the app can feed …"), inputs of different fixed
            lengths, a fixed batch other than 1, a past without one dynamic axis.
    """
    init = {t.name for t in model.graph.initializer}
    items = []
    for value in (i for i in model.graph.input if i.name not in init):
        dtype, dims = _info(value, name)
        role = _role(value.name, dtype)
        if role is None:
            raise UploadError(
                f"{name}: its input '{value.name}' ({dtype}) is not one the app can feed: "
                "token ids, attention_mask, position_ids, token_type_ids or past keys/values"
            )
        items.append(GraphInput(value.name, role, dtype, dims))
    ids = [i for i in items if i.role == "ids"]
    if len(ids) != 1:
        listed = ", ".join(i.name for i in ids)[:200] or "none"
        raise UploadError(
            f"{name}: needed one integer input of token ids, shape (batch, T) or (T); "
            f"found {len(ids)} ({listed})"
        )
    fixed = {i.name: T for i in items if (T := _check_dims(i, name)) is not None}
    if len(set(fixed.values())) > 1:
        raise UploadError(f"{name}: its inputs have different fixed lengths ({fixed})")
    pad_id, pad_text = pad_token(spec)
    others = tuple(i for i in items if i.role != "ids")
    return GraphInputs(ids[0], others, next(iter(fixed.values()), None), pad_id, pad_text)


def pad_token(spec: dict) -> tuple[int, str]:
    """(id, text) of the tokenizer's pad token, else its end-of-text token, else id 0.

    ``spec`` is a tokenizer spec (``upload/tokenizer_spec.py``): a BPE's ``special``
    tokens, or any vocabulary's entries, are searched for "pad", then "endoftext",
    "eos", "</s>", "end".
    """
    vocab = spec.get("vocab") or spec.get("stoi") or {}
    special = [t for t in spec.get("special") or [] if t in vocab]
    marked = special or [t for t in vocab if t.startswith(("<", "["))]
    for words in (PAD_WORDS, EOS_WORDS):
        for token in marked:
            if any(w in token.lower() for w in words):
                return int(vocab[token]), token
    first = next((t for t, i in vocab.items() if i == 0), "")
    return 0, first


def padding_note(model: PaddedModel, name: str) -> str | None:
    """The card's line on padding to a fixed token axis (None for a dynamic one),
    measured: a 3-token sentence padded with the pad id, then with another id; if its
    own tokens' logits or attention differ, the padding changes the result.

    Raises:
        UploadError: onnxruntime failed on a padded sentence.
    """
    inputs, T = model.inputs, model.inputs.fixed_T
    if T is None or T < 2:
        return None
    ids = [i % 2 for i in range(min(3, T - 1))]
    try:
        first = model.inspect(ids)
        model.inputs = replace(inputs, pad_id=(inputs.pad_id + 1) % model.config.vocab_size)
        second = model.inspect(ids)
    except ModelRunError as exc:
        raise UploadError(f"{name}: refused: on a padded test input {exc}") from None
    finally:
        model.inputs = inputs
    same = all(np.allclose(first[k], second[k], rtol=1e-5, atol=1e-6) for k in first)
    pad, mask = f"id {inputs.pad_id} ({inputs.pad_text!r})", inputs.mask
    if same:
        masked = f", masked out by {mask.name} = 0," if mask else ""
        return (
            f"The graph takes a fixed {T} tokens: a shorter sentence is padded after its end "
            f"with {pad}{masked} and only its own tokens are shown (checked: the padding "
            "does not change them)."
        )
    why = f"ignores {mask.name} = 0 there" if mask else "has no attention mask input"
    return (
        f"Padding changes the result: the graph takes a fixed {T} tokens and {why}, so "
        f"a shorter sentence's numbers depend on the {pad} padding after it."
    )
