"""Run exported graphs with onnxruntime: the app's engine (no torch import).

A graph made by ``export/graphs.py`` carries its config and tokenizer in the
ONNX metadata (``config``, ``tokenizer``), so a set of graph files is a complete
model. Sessions are opened and run by ``inference/sessions.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnxruntime as ort
from safetensors.numpy import load_file
from tokenizers import Tokenizer

from inference.lab import run_batches
from inference.lazy_graph import LazyGraph
from inference.sampling import GREEDY, Sampling, pick
from inference.sessions import graph_metadata, make_session, run_session
from models import contract
from models.card import ModelCard
from models.config import ModelConfig
from models.tokenizer import load_tokenizer


@dataclass
class OnnxModel:
    """An inspect graph plus optional fast and step graphs, with config and tokenizer.

    Attributes:
        name: display name.
        config: the model's ``ModelConfig``.
        tokenizer: its tokenizer.
        inspect_session: runs the inspect graph (all named outputs).
        fast_session: logits only (falls back to the inspect graph when absent).
        step_session: linear attention's one-token recurrent graph, or None.
        card: its :class:`~models.card.ModelCard`, or None when there is none.
        weights: the PyTorch-named float32 weights (``blocks.0.attn.q_proj.weight``
            (C, C), ...) when a checkpoint is at hand, else None (plain ONNX upload).
    """

    name: str
    config: ModelConfig
    tokenizer: Tokenizer
    inspect_session: ort.InferenceSession
    fast_session: ort.InferenceSession | None = None
    step_session: ort.InferenceSession | None = None
    card: ModelCard | None = None
    weights: dict[str, np.ndarray] | None = None
    lab_graph: LazyGraph | None = None  # opened on first use, shared by copies (``lab``)

    @property
    def has_lab(self) -> bool:
        """True when the model has a lab graph (interventions: ``inference/lab.py``)."""
        return self.lab_graph is not None

    def lab(self, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The lab graph on ``feeds`` (``contract.LAB_INPUTS``, B runs): name -> array
        (``contract.LAB_AXES``). Its session opens on the first call (a served GPT-2 holds
        its weights once more in it: only when someone opens a lab view). A graph with a
        fixed batch (DeltaNet's: 1) runs in turns.

        Raises:
            RuntimeError: without a lab graph. ModelRunError: onnxruntime failed.
        """
        if self.lab_graph is None:
            raise RuntimeError(f"{self.name} has no lab graph")
        self._check_length(feeds[contract.INPUT_NAME][0].tolist())
        session, names = self.lab_graph.session(), list(contract.LAB_OUTPUTS)
        batch = session.get_inputs()[0].shape[0]

        def run_one(part):
            return dict(zip(names, run_session(session, names, part), strict=True))

        return run_batches(run_one, feeds, batch if isinstance(batch, int) else None)

    @property
    def has_step(self) -> bool:
        """True when a recurrent step graph is open (linear attention)."""
        return self.step_session is not None

    @property
    def provider(self) -> str:
        """The execution provider actually running the inspect graph."""
        return self.inspect_session.get_providers()[0]

    def inspect(
        self, ids: list[int], names: tuple[str, ...] | None = None
    ) -> dict[str, np.ndarray]:
        """The contract outputs for one sentence of T = len(ids) tokens: all of them but
        the block outputs (``contract.block_outputs``), or those in ``names`` (onnxruntime then hands back only those; a large model's
        ``scores`` (L, H, T, T) need not be returned with its ``attn``).

        Returns:
            name -> array, shapes as in ``models/contract.py`` (``logits`` (1, T, V),
            ``attn`` (L, H, T, T), ...).

        Raises:
            ValueError: for an empty sentence or one longer than the context length.
            ModelRunError: if onnxruntime fails on this input.
        """
        self._check_length(ids)
        outputs = [o.name for o in self.inspect_session.get_outputs()]
        if names is None:  # the block outputs only when asked for (``block``)
            names = tuple(n for n in outputs if not contract.is_block_output(n))
        wanted = [n for n in outputs if n in names]
        arrays = run_session(self.inspect_session, wanted, {contract.INPUT_NAME: _ids(ids)})
        return dict(zip(wanted, arrays, strict=True))

    def logits(self, ids: list[int]) -> np.ndarray:
        """Next-token logits at every position: (T, V).

        Raises:
            ValueError: for an empty sentence or one longer than the context length.
            ModelRunError: if onnxruntime fails on this input.
        """
        self._check_length(ids)
        session = self.fast_session or self.inspect_session
        out = run_session(session, ["logits"], {contract.INPUT_NAME: _ids(ids)})[0]
        return out[0]  # (T, V)

    def recurrent(self, ids: list[int]) -> dict[str, np.ndarray]:
        """Roll the step graph over ``ids`` from a zero state.

        Returns:
            ``logits`` (T, V), ``state`` (L, H, T, d_head, d_head), ``normalizer``
            (L, H, T, d_head): the recurrent form's values after each token.

        Raises:
            RuntimeError: if this model has no step graph.
            ModelRunError: if onnxruntime fails on this input.
        """
        if self.step_session is None:
            raise RuntimeError(f"{self.name} has no recurrent step graph")
        S, z = zero_state(self.config)  # (L, H, D, D), (L, H, D)
        logits, states, normalizers = [], [], []
        for i, token in enumerate(ids):
            lg, S, z = self._step(token, i, S, z)
            logits.append(lg[0])
            states.append(S)
            normalizers.append(z)
        carried = contract.step_names(self.config.attention)[0][3]  # normalizer | conv
        return {
            "logits": np.stack(logits),  # (T, V)
            "state": np.stack(states, axis=2),  # (L, H, T, D, D)
            carried: np.stack(normalizers, axis=2),  # (L, H, T, D) | (L, 3, T, 3, C)
        }

    def generate(
        self, ids: list[int], n_new: int, sampling: Sampling = GREEDY
    ) -> tuple[list[int], list[float]]:
        """Extend ``ids`` by up to ``n_new`` tokens, stopping at the context length.

        Linear models use the step graph (O(1) work per new token); softmax models
        rerun the fast graph on the whole sequence. The sequence never grows past
        ``context_length``: no model has seen a longer one, and one with learned
        positions has no embedding for it.

        Args:
            ids: the T token ids to continue (1 <= T).
            n_new: how many tokens to add at most.
            sampling: greedy, or temperature / top-k sampling with a seed.

        Returns:
            ``(new_ids, probs)``: the new ids (``min(n_new, context_length - T)`` of
            them) and the model's probability of each when it was picked.

        Raises:
            ValueError: if ``ids`` is empty (there is nothing to continue).
            ModelRunError: if onnxruntime fails on this input.
        """
        if not ids:
            raise ValueError("generation needs at least one token to continue")
        rng = np.random.default_rng(sampling.seed)
        seq = list(ids)
        n_new = max(0, min(n_new, self.config.context_length - len(seq)))
        new: list[int] = []
        probs: list[float] = []
        if n_new == 0:
            return new, probs
        if self.step_session is not None:
            S, z = zero_state(self.config)  # (L, H, D, D), (L, H, D)
            for i, token in enumerate(seq):
                lg, S, z = self._step(token, i, S, z)  # lg: (1, V)
            for _ in range(n_new):
                token, p = pick(lg[0], sampling, rng)
                new.append(token)
                probs.append(p)
                seq.append(token)
                lg, S, z = self._step(token, len(seq) - 1, S, z)
            return new, probs
        for _ in range(n_new):
            token, p = pick(self.logits(seq)[-1], sampling, rng)  # from (V,) logits
            new.append(token)
            probs.append(p)
            seq.append(token)
        return new, probs

    def _step(self, token: int, position: int, S: np.ndarray, z: np.ndarray) -> list:
        """One run of the step graph: ``[logits (1, V), S_i (L, H, D, D), z_i (L, H, D)]``."""
        feed = {
            "token": np.array([[token]], np.int64),
            "position": np.array([position], np.int64),
            "state": S,
            contract.step_names(self.config.attention)[0][3]: z,  # normalizer | conv
        }
        return run_session(self.step_session, None, feed)

    def _check_length(self, ids: list[int]) -> None:
        check_length(ids, self.config.context_length)


def check_length(ids: list[int], context_length: int) -> None:
    """Raises ValueError for no tokens or more than ``context_length`` of them."""
    if not ids:
        raise ValueError("no tokens to run")
    if len(ids) > context_length:
        raise ValueError(f"{len(ids)} tokens is longer than the context length {context_length}")


def _ids(ids: list[int]) -> np.ndarray:
    return np.asarray(ids, dtype=np.int64)[None, :]  # (1, T)


def zero_state(cfg: ModelConfig) -> tuple[np.ndarray, np.ndarray]:
    """The recurrent form before any token: state S_0 (L, H, d_head, d_head) and
    normalizer z_0 (L, H, d_head) (DeltaNet: the convolution window (L, 3, 3, d_model)),
    float32 zeros (the step graph's first inputs)."""
    L, H, D = cfg.n_layer, cfg.n_head, cfg.d_head
    second = (L, 3, 3, cfg.d_model) if cfg.attention == "delta" else (L, H, D)
    return np.zeros((L, H, D, D), np.float32), np.zeros(second, np.float32)


def load_graphs(
    inspect: str | Path | bytes,
    fast: str | Path | bytes | None = None,
    step: str | Path | bytes | None = None,
    name: str = "model",
    card: ModelCard | None = None,
    tokenizer: Tokenizer | None = None,
    lab: str | Path | bytes | Callable[[], bytes] | None = None,
) -> OnnxModel:
    """Open graphs whose metadata carries ``config`` and ``tokenizer``. ``tokenizer``: the
    one the metadata holds, already built by the caller (an upload's, from its checked
    spec: parsing a 262,144-word tokenizer's JSON holds the GIL 0.55 s, building it from
    the spec 0.22 s).

    Raises:
        ValueError: if the inspect graph lacks that metadata or it is invalid.
    """
    session = make_session(Path(inspect) if isinstance(inspect, str) else inspect)
    meta = graph_metadata(session)
    if "config" not in meta or "tokenizer" not in meta:
        raise ValueError("the ONNX file has no 'config' and 'tokenizer' metadata")
    config = ModelConfig.from_dict(json.loads(meta["config"]))
    tokenizer = tokenizer or load_tokenizer(meta["tokenizer"])

    def _open(src):
        return None if src is None else make_session(Path(src) if isinstance(src, str) else src)

    model = OnnxModel(name, config, tokenizer, session, _open(fast), _open(step), card)
    model.lab_graph = None if lab is None else LazyGraph(lab)
    return model


def load_shipped(folder: Path, kind: str) -> OnnxModel:
    """One of the shipped models in ``exported/`` (``kind`` = softmax | linear)."""
    card_path = folder / "model_card.json"
    entry = json.loads(card_path.read_text())["models"].get(kind) if card_path.exists() else None
    card = ModelCard.from_dict(entry) if entry else None
    step = folder / contract.graph_file(kind, "step")
    lab = folder / contract.graph_file(kind, "lab")
    model = load_graphs(
        folder / contract.graph_file(kind, "inspect"),
        folder / contract.graph_file(kind, "fast"),
        step if step.exists() else None,
        name=f"{kind} (shipped)",
        card=card,
        lab=lab if lab.exists() else None,
    )
    checkpoint = folder / f"{kind}.safetensors"
    if checkpoint.exists():
        model.weights = load_file(str(checkpoint))  # safetensors' numpy loader: no torch
    return model
