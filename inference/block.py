"""One transformer block in numbers: the residual stream through block ``layer`` (#21).

The numbers are the inspect graph's own block outputs (``models/contract.py``:
``blocks.{l}.resid_pre``, ``ln1``, ``attn.out``, ``resid_mid``, ``ln2``, ``mlp.hidden``,
``mlp.out``, ``resid_post``), asked for by name: the graph computes them in the forward
pass that gives the logits, nothing here recomputes the model. A graph without them (a
foreign or older upload) has no block numbers (:func:`has_block_outputs`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from inference.runtime import OnnxModel
from models import contract


def has_block_outputs(model) -> bool:
    """True when ``model`` is an :class:`OnnxModel` whose inspect graph has every block
    output of every layer (an isolated upload's worker returns only the contract's)."""
    if not isinstance(model, OnnxModel):
        return False
    names = {o.name for o in model.inspect_session.get_outputs()}
    return set(contract.block_outputs(model.config.n_layer)) <= names


def block_outputs(model: OnnxModel, ids: list[int], layer: int) -> dict[str, np.ndarray]:
    """Block ``layer``'s outputs for a sentence of T = len(ids) tokens, by hook name.

    Returns:
        ``contract.BLOCK_HOOKS`` -> (T, C) float32 (``mlp.hidden`` (T, d_mlp)).

    Raises:
        LookupError: if the graph lacks the block outputs (:func:`has_block_outputs`).
        IndexError: for a layer outside 0..n_layer-1.
        ValueError / inference.sessions.ModelRunError: as ``OnnxModel.inspect``.
    """
    if not 0 <= layer < model.config.n_layer:
        raise IndexError(f"layer {layer} is not one of 0..{model.config.n_layer - 1}")
    if not has_block_outputs(model):
        raise LookupError(f"{model.name}: its graph has no block outputs")
    names = contract.block_outputs(model.config.n_layer, layer)
    got = model.inspect(ids, names)
    return {name.removeprefix(f"blocks.{layer}."): got[name] for name in names}


@dataclass(frozen=True)
class BlockNumbers:
    """What the block view shows of one layer on one sentence.

    Attributes:
        tensors: hook -> (T, C) (``mlp.hidden`` (T, d_mlp)), the graph's outputs.
        norms: hook -> (T,) L2 norm of each token's vector, ||x_t||.
        residual_gap: max over tokens and dimensions of |resid_post - (resid_pre +
            attn.out + mlp.out)|: the block only adds (float32 rounding, ~1e-6).
    """

    tensors: dict[str, np.ndarray]
    norms: dict[str, np.ndarray]
    residual_gap: float

    @property
    def T(self) -> int:
        return int(self.tensors["resid_pre"].shape[0])

    def token(self, t: int) -> dict[str, np.ndarray]:
        """Token ``t``'s vector at every hook: hook -> (C,) (``mlp.hidden`` (d_mlp,)).

        Raises:
            IndexError: for t outside 0..T-1.
        """
        if not 0 <= t < self.T:
            raise IndexError(f"token {t} is not one of 0..{self.T - 1}")
        return {hook: x[t] for hook, x in self.tensors.items()}

    def added_share(self, t: int) -> dict[str, float]:
        """How much of token ``t``'s residual out each part wrote: the projection of
        ``resid_pre``, ``attn.out`` and ``mlp.out`` on resid_post's direction, divided by
        ||resid_post||; the three sum to 1 (the residual stream is their sum)."""
        vec = self.token(t)
        out = vec["resid_post"].astype(np.float64)  # (C,)
        denom = float(out @ out) or 1.0
        return {h: float(vec[h].astype(np.float64) @ out) / denom for h in PARTS}


PARTS = ("resid_pre", "attn.out", "mlp.out")  # resid_post is their sum


def block_numbers(tensors: dict[str, np.ndarray]) -> BlockNumbers:
    """:class:`BlockNumbers` of one layer's outputs (:func:`block_outputs`).

    Raises:
        KeyError: if a hook of ``contract.BLOCK_HOOKS`` is missing.
    """
    tensors = {hook: np.asarray(tensors[hook]) for hook in contract.BLOCK_HOOKS}
    norms = {hook: np.linalg.norm(x.astype(np.float64), axis=-1) for hook, x in tensors.items()}
    total = sum(tensors[h].astype(np.float64) for h in PARTS)  # (T, C)
    gap = float(np.abs(tensors["resid_post"] - total).max())
    return BlockNumbers(tensors, norms, gap)
