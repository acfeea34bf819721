"""An uploaded ONNX graph: user code, so it runs only in its worker, never in the server.

:class:`IsolatedModel` has the interface the app uses of ``inference.runtime.OnnxModel``
(``config``, ``tokenizer``, ``card``, ``inspect``, ``logits``, ``recurrent``,
``generate``, ``has_step``); each call is one bounded request to the worker (token ids
in, named arrays out, every shape checked against the config before the server
allocates it). A failure is a :class:`inference.sessions.ModelRunError` with one line, so
the page reports it like any model error; the next call starts a fresh worker.
"""

from __future__ import annotations

import weakref

import numpy as np
from tokenizers import Tokenizer

from inference.runtime import check_length
from inference.sampling import GREEDY, Sampling
from inference.sessions import ModelRunError
from models import contract
from models.card import ModelCard
from models.config import ModelConfig
from upload.client import Worker
from upload.errors import UploadError
from upload.limits import ANALYSIS_TIMEOUT_S, CONVERT_TIMEOUT_S


class IsolatedModel:
    """Graphs opened in a worker. Build with :func:`upload.load.load_upload`.

    Attributes:
        name, config, tokenizer, card: as ``OnnxModel``'s; ``weights`` is None.
        provider: "CPUExecutionProvider (isolated upload worker)".
    """

    weights = None
    provider = "CPUExecutionProvider (isolated upload worker)"

    def __init__(self, worker: Worker, files: dict[str, bytes], reply: dict, cfg: ModelConfig,
                 tokenizer: Tokenizer, card: ModelCard):  # fmt: skip
        self._worker, self._files = worker, files
        self.name = f"upload: {reply['name']}"
        self.config, self.tokenizer, self.card = cfg, tokenizer, card
        self.has_step = bool(reply.get("has_step"))
        known = (*contract.inspect_outputs(cfg.attention), *contract.FOREIGN_OUTPUTS)
        self._outputs = tuple(n for n in dict.fromkeys(known) if n in reply["outputs"])
        self._finalizer = weakref.finalize(self, worker.stop)

    def close(self) -> None:
        """Stop the worker now (it also stops when this object is garbage-collected)."""
        self._finalizer()

    def _call(self, header: dict, expect=None) -> tuple[dict, dict[str, np.ndarray]]:
        timeout = ANALYSIS_TIMEOUT_S
        if not self._worker.alive:  # idle exit or an earlier failure: open the graphs again
            try:
                self._worker.request({"op": "open"}, CONVERT_TIMEOUT_S, blobs=self._files)
            except UploadError as exc:
                raise ModelRunError(str(exc)) from None
        try:
            return self._worker.request(header, timeout, expect=expect)
        except UploadError as exc:
            raise ModelRunError(str(exc)) from None

    def _check_length(self, ids: list[int]) -> None:
        check_length(ids, self.config.context_length)

    def _shapes(self, axes: dict[str, str], T: int):
        sizes = contract.axis_sizes(self.config, T)
        shapes = {n: tuple(sizes[a] for a in ax) for n, ax in axes.items()}
        return lambda reply: lambda name, shape: shapes.get(name) == shape

    def inspect(self, ids: list[int]) -> dict[str, np.ndarray]:
        """The contract outputs for one sentence: name -> array (``logits`` (1, T, V),
        ``attn`` (L, H, T, T), ...), computed in the worker.

        Raises:
            ValueError: empty or longer than the context. ModelRunError: the worker failed.
        """
        self._check_length(ids)
        every = {**contract.OUTPUT_AXES, **contract.FOREIGN_OUTPUT_AXES}
        axes = {n: every[n] for n in self._outputs}
        _, out = self._call({"op": "inspect", "ids": list(ids)}, self._shapes(axes, len(ids)))
        if set(out) != set(self._outputs):
            raise ModelRunError(f"{self.name}: the worker returned {sorted(out)}")
        return out

    def logits(self, ids: list[int]) -> np.ndarray:
        """Next-token logits at every position: (T, V)."""
        self._check_length(ids)
        expect = self._shapes({"logits": "TV"}, len(ids))
        return self._call({"op": "logits", "ids": list(ids)}, expect)[1]["logits"]

    def recurrent(self, ids: list[int]) -> dict[str, np.ndarray]:
        """The step graph rolled over ``ids``: ``logits`` (T, V), ``state`` (L, H, T, D, D),
        ``normalizer`` (L, H, T, D).

        Raises:
            RuntimeError: without a step graph. ModelRunError: the worker failed.
        """
        if not self.has_step:
            raise RuntimeError(f"{self.name} has no recurrent step graph")
        self._check_length(ids)
        axes = {"logits": "TV", "state": "LHTDD", "normalizer": "LHTD"}
        return self._call({"op": "recurrent", "ids": list(ids)}, self._shapes(axes, len(ids)))[1]

    def generate(
        self, ids: list[int], n_new: int, sampling: Sampling = GREEDY
    ) -> tuple[list[int], list[float]]:
        """As ``inference.runtime.OnnxModel.generate``, computed in the worker: up to
        ``n_new`` new ids (never past the context) and the model's probability of each.

        Raises:
            ValueError: if ``ids`` is empty.
            ModelRunError: if the worker fails or returns anything but that.
        """
        if not ids:
            raise ValueError("generation needs at least one token to continue")
        request = {"op": "generate", "ids": list(ids), "n_new": int(n_new)}
        reply, _ = self._call({**request, "sampling": sampling.to_dict()})
        new, probs = reply.get("new"), reply.get("probs")
        V, room = self.config.vocab_size, self.config.context_length - len(ids)
        if (
            not isinstance(new, list)
            or not isinstance(probs, list)
            or len(new) != len(probs)
            or len(new) > min(n_new, max(0, room))
            or any(type(i) is not int or not 0 <= i < V for i in new)
            or any(type(p) is not float or not 0.0 <= p <= 1.0 for p in probs)
        ):
            raise ModelRunError(f"{self.name}: the worker returned no valid token ids")
        return new, probs
