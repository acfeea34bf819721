"""The same model in PyTorch and onnxruntime, plus its key/value-cache graph.

Comparisons that need two implementations of one model (PyTorch eager vs
onnxruntime; recomputation vs cached decoding) must run the same weights. With
a ``<kind>.safetensors`` checkpoint next to the shipped graphs, the twin is
that checkpoint and the shipped fast graph; without one, a random model of the
shipped config is exported here, so both sides still share weights.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnxruntime as ort
import torch

from export.checks import check_graph
from export.graphs import export_fast_graph
from export.kv_cache import export_kv_cache
from inference.decode import OnnxKVDecoder
from inference.runtime import OnnxModel
from inference.sessions import make_session
from models import contract
from models.checkpoint import SHIPPED_DIR, load_checkpoint
from models.transformer import Transformer


def torch_model(kind: str, model: OnnxModel, folder: Path = SHIPPED_DIR):
    """The PyTorch twin of a shipped model: ``(Transformer, source)``.

    Loads ``<folder>/<kind>.safetensors`` when present (same weights as the ONNX
    graphs); otherwise a randomly initialized ``Transformer`` of the shipped config
    (same shapes and cost, different numbers), and ``source`` says which.
    """
    path = folder / f"{kind}.safetensors"
    if path.exists():
        net, _tok, _meta = load_checkpoint(path)
        return net.eval(), f"checkpoint {path.name}"
    torch.manual_seed(0)
    return Transformer(model.config).eval(), "random weights, shipped config (no checkpoint)"


@dataclass
class Twin:
    """One model as PyTorch module and onnxruntime sessions with the same weights.

    Attributes:
        net: the PyTorch ``Transformer`` (eval mode).
        fast: onnxruntime session of its fast graph: input_ids (1, T) -> logits (1, T, V).
        kv: softmax only: its key/value-cache decoding graph, else None.
        source: where the weights came from.
        max_abs_diff: max |onnxruntime - PyTorch| logits on a 16-token check input.
    """

    net: torch.nn.Module
    fast: ort.InferenceSession
    kv: OnnxKVDecoder | None
    source: str
    max_abs_diff: float


def make_twin(kind: str, model: OnnxModel, folder: Path, tmp: Path, kv: bool = False) -> Twin:
    """Build the :class:`Twin` of shipped ``model``; exports go into ``tmp``."""
    net, source = torch_model(kind, model, folder)
    if source.startswith("checkpoint"):
        fast = model.fast_session or model.inspect_session
    else:
        tmp.mkdir(parents=True, exist_ok=True)
        path = tmp / f"{kind}.fast.onnx"
        T = torch.export.Dim("T", min=1, max=1 << 16)
        example = torch.randint(0, model.config.vocab_size, (1, 8))  # (1, T)
        export_fast_graph(net.eval(), path, example, T)
        check_graph(path, {contract.INPUT_NAME: 1})
        fast = make_session(path)
    ids = np.arange(16, dtype=np.int64)[None, :] % model.config.vocab_size  # (1, 16)
    with torch.inference_mode():
        ref = net(torch.from_numpy(ids)).numpy()  # (1, 16, V)
    diff = float(np.abs(fast.run(["logits"], {contract.INPUT_NAME: ids})[0] - ref).max())
    decoder = None
    if kv and kind == "softmax":
        cfg = model.config
        path = export_kv_cache(net, tmp)
        decoder = OnnxKVDecoder(path, cfg.n_layer, cfg.n_head, cfg.d_head)
    return Twin(net, fast, decoder, source, diff)
