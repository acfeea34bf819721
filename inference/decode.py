"""Greedy decoding loops that time every generated token.

Three ways to generate with the shipped models:

* ``recurrent``: linear attention's step graph, a fixed-size state per token.
* ``recompute``: softmax attention's fast graph on the whole prefix every token
  (no window), O(P^2) work for the P-th token.
* ``kv_cache``: softmax attention with cached keys and values (the graph of
  ``export/kv_cache.py``, run by :class:`OnnxKVDecoder`).

On a CUDA session the carried tensors (recurrent state, or key/value caches)
stay on the GPU through onnxruntime I/O binding; only the logits come back.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import onnxruntime as ort

from inference.runtime import zero_state
from inference.sessions import make_session
from models import contract


def _on_cuda(session: ort.InferenceSession) -> bool:
    return session.get_providers()[0] == "CUDAExecutionProvider"


def stateful(
    session: ort.InferenceSession,
    prompt: list[int],
    n_new: int,
    carried: dict[str, np.ndarray],
    outputs: tuple[str, ...],
) -> tuple[list[int], list[float]]:
    """Greedy generation with a graph (token, position, *carried) -> (logits, *carried').

    Args:
        session: the step graph (``linear.step.onnx``) or the key/value-cache graph.
        prompt: token ids fed first (at least one).
        n_new: tokens to generate.
        carried: input name -> initial array (zeros state, or empty caches).
        outputs: output names, logits first, then the carried tensors in ``carried`` order.

    Returns:
        ``(new_ids, ms)``: the generated ids and the milliseconds each took (the
        prompt's steps are not timed).
    """
    names = list(carried)
    if _on_cuda(session):
        return _stateful_cuda(session, prompt, n_new, carried, outputs)
    values = list(carried.values())

    def step(token: int, position: int) -> np.ndarray:
        nonlocal values
        feed = {"token": np.array([[token]], np.int64), "position": np.array([position], np.int64)}
        feed.update(zip(names, values, strict=True))
        logits, *values = session.run(list(outputs), feed)
        return logits  # (1, V)

    return _greedy(prompt, n_new, step)


def _greedy(prompt: list[int], n_new: int, step) -> tuple[list[int], list[float]]:
    """Feed ``prompt`` then ``n_new`` greedy tokens through ``step(token, position) ->
    logits (1, V)``; returns the new ids and each new token's milliseconds."""
    seq, new, ms = list(prompt), [], []
    logits = None
    for i in range(len(prompt) + n_new):
        start = time.perf_counter()
        if i >= len(prompt):
            seq.append(int(np.argmax(logits[0])))
            new.append(seq[-1])
        logits = step(seq[i], i)
        if i >= len(prompt):
            ms.append((time.perf_counter() - start) * 1e3)
    return new[:n_new], ms


def _stateful_cuda(session, prompt, n_new, carried, outputs):
    """As :func:`stateful`, with the carried tensors kept on the GPU (I/O binding)."""
    names = list(carried)
    values = [ort.OrtValue.ortvalue_from_numpy(a, "cuda", 0) for a in carried.values()]
    binding = session.io_binding()

    def step(token: int, position: int) -> np.ndarray:
        nonlocal values
        binding.bind_cpu_input("token", np.array([[token]], np.int64))
        binding.bind_cpu_input("position", np.array([position], np.int64))
        for name, value in zip(names, values, strict=True):
            binding.bind_ortvalue_input(name, value)
        binding.bind_output(outputs[0], "cpu")
        for name in outputs[1:]:
            binding.bind_output(name, "cuda", 0)
        session.run_with_iobinding(binding)
        logits_value, *values = binding.get_outputs()
        binding.clear_binding_outputs()
        return logits_value.numpy()  # (1, V)

    return _greedy(prompt, n_new, step)


def recurrent(model, prompt: list[int], n_new: int) -> tuple[list[int], list[float]]:
    """Linear attention's step graph: O(1) work and memory per token."""
    S, z = zero_state(model.config)  # (L, H, D, D), (L, H, D) or DeltaNet's window
    inputs, outputs = contract.step_names(model.config.attention)
    carried = {"state": S, inputs[3]: z}
    return stateful(model.step_session, prompt, n_new, carried, outputs)


def kv_cache(decoder, prompt: list[int], n_new: int) -> tuple[list[int], list[float]]:
    """Softmax attention with a key/value cache: O(P) work per token, 2 L H P D floats."""
    k, v = decoder.empty()  # (L, H, 0, D) each
    outputs = ("logits", "k_out", "v_out")
    return stateful(decoder.session, prompt, n_new, {"past_k": k, "past_v": v}, outputs)


def recompute(session, prompt: list[int], n_new: int) -> tuple[list[int], list[float]]:
    """Softmax attention's fast graph on the whole prefix for every new token.

    The fast graph's only output is the logits of every position, (1, P, V), so each
    token copies all of them to the host (P·V·4 bytes) though only the last row is
    used; on CUDA that copy is part of the timed cost (the cache and step graphs
    return only (1, V)).
    """
    seq, new, ms = list(prompt), [], []
    for _ in range(n_new):
        start = time.perf_counter()
        ids = np.asarray(seq, np.int64)[None, :]  # (1, P)
        logits = session.run(["logits"], {contract.INPUT_NAME: ids})[0]  # (1, P, V)
        seq.append(int(np.argmax(logits[0, -1])))
        new.append(seq[-1])
        ms.append((time.perf_counter() - start) * 1e3)
    return new, ms


def tokens_per_second(ms: list[float], prompt_len: int, buckets: int = 16) -> dict:
    """Throughput as the sequence grows: mean tokens/s over ``buckets`` equal slices.

    Returns:
        ``{"length": [...], "tokens_per_s": [...]}``, length = sequence length at
        each slice's end (prompt included).
    """
    edges = np.linspace(0, len(ms), min(buckets, len(ms)) + 1).astype(int)
    lengths, rates = [], []
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        if b > a:
            lengths.append(int(prompt_len + b))
            rates.append(float(1e3 * (b - a) / sum(ms[a:b])))
    return {"length": lengths, "tokens_per_s": rates}


class OnnxKVDecoder:
    """Greedy decoding with the exported key/value-cache graph in onnxruntime."""

    def __init__(self, path: Path, n_layer: int, n_head: int, d_head: int):
        self.session: ort.InferenceSession = make_session(Path(path))
        self.shape = (n_layer, n_head, 0, d_head)

    def empty(self) -> tuple[np.ndarray, np.ndarray]:
        """Zero-length caches: two (L, H, 0, d_head) arrays."""
        return np.zeros(self.shape, np.float32), np.zeros(self.shape, np.float32)

    def step(self, token: int, position: int, k: np.ndarray, v: np.ndarray):
        """One token: returns logits (V,), k, v (L, H, P + 1, d_head)."""
        feed = {
            "token": np.array([[token]], np.int64),
            "position": np.array([position], np.int64),
            "past_k": k,
            "past_v": v,
        }
        logits, k, v = self.session.run(None, feed)
        return logits[0], k, v
