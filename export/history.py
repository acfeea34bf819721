"""Attention graphs of a run's kept checkpoints, for the app's training history.

One graph per model kind is traced (``torch.onnx.export``, dynamo, not optimised, so each
parameter stays an initializer named ``model.<state_dict key>``); every checkpoint's graph
is that graph with the checkpoint's weights put in, each stored as float16 and cast back
to float32 by a ``Cast`` node, so a checkpoint costs about 1.4 MB instead of a trace
(seconds to a minute) and 2.8 MB. The weights ``training.train --history`` keeps are
already rounded to float16, so the graph computes what the torch model of the same file
computes (``tests/export/test_history.py``).

Each graph: ``input_ids`` int64 (1, T), T <= context_length -> ``attn`` float32
(L, H, T, T), the weights of every layer and head (``models.contract``'s ``attn``).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import onnx
import onnx.utils
import torch
from onnx import TensorProto, helper, numpy_helper
from tokenizers import Tokenizer
from torch import nn

from export.checks import check_graph
from export.torch_export import export_module
from models import contract
from models.transformer import Transformer

ATTN = "attn"  # the graph's one output, as the inspect graph names it


class AttentionGraph(nn.Module):
    """input_ids (1, T) -> attn (L, H, T, T): the inspect graph's ``attn`` alone."""

    def __init__(self, model: Transformer):
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        """int64 (1, T) -> (L, H, T, T) attention weights."""
        return self.model(input_ids, inspect=True)[1][ATTN]


def trace_template(model: Transformer) -> onnx.ModelProto:
    """The attention graph of ``model`` with every parameter a named initializer
    (``model.<key>``), every node no ``attn`` needs removed, and no per-node debug text.

    Raises:
        ValueError: if the sequence axis is not symbolic (``export.checks.check_graph``).
    """
    model = model.eval()
    T = torch.export.Dim("T", min=1, max=model.cfg.context_length)
    example = torch.randint(0, model.cfg.vocab_size, (1, min(8, model.cfg.context_length)))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "attn.onnx"
        names = [contract.INPUT_NAME]
        dynamic = {names[0]: {1: T}}
        export_module(
            AttentionGraph(model), (example,), path, names, [ATTN], dynamic, keep_names=True
        )
        check_graph(path, {contract.INPUT_NAME: 1})
        graph = onnx.load(str(path))
    graph = onnx.utils.Extractor(graph).extract_model([contract.INPUT_NAME], [ATTN])
    for node in graph.graph.node:  # the exporter's per-node debug text: a third of the file
        del node.metadata_props[:]
        node.doc_string = ""
    return graph


def with_weights(template: onnx.ModelProto, state: dict[str, np.ndarray]) -> onnx.ModelProto:
    """A copy of ``template`` whose parameter initializers hold ``state``'s values
    (``model.<key>`` <- ``state[key]``), float16, each cast back to float32 by a node.

    Raises:
        KeyError: naming a parameter of the graph that ``state`` lacks.
        ValueError: if a value's shape differs from the graph's.
    """
    graph = onnx.ModelProto()
    graph.CopyFrom(template)
    kept, casts = [], []
    for init in graph.graph.initializer:
        key = init.name.removeprefix("model.")
        if not init.name.startswith("model.") or init.data_type != TensorProto.FLOAT:
            kept.append(init)
            continue
        value = np.asarray(state[key], dtype=np.float32)
        if value.shape != tuple(init.dims):
            raise ValueError(f"{key}: shape {value.shape}, the graph has {tuple(init.dims)}")
        kept.append(numpy_helper.from_array(value.astype(np.float16), init.name + ".f16"))
        casts.append(helper.make_node("Cast", [init.name + ".f16"], [init.name], to=1))
    del graph.graph.initializer[:]
    graph.graph.initializer.extend(kept)
    nodes = casts + list(graph.graph.node)
    del graph.graph.node[:]
    graph.graph.node.extend(nodes)
    return graph


def write_history_graphs(
    models: dict[int, Transformer], out_dir: Path, tokenizer: Tokenizer
) -> list[Path]:
    """``<kind>.step<N>.onnx`` in ``out_dir`` for each step -> model of one run: one trace,
    then :func:`with_weights` per checkpoint, with ``config``, ``tokenizer`` and ``step`` in
    each graph's metadata; each graph checked by ``onnx.checker``.

    Returns:
        The written paths, by step.
    """
    first = models[min(models)]
    template = trace_template(first)
    paths = []
    for step, model in sorted(models.items()):
        state = {k: v.detach().numpy() for k, v in model.state_dict().items()}
        graph = with_weights(template, state)
        helper.set_model_props(
            graph,
            {"config": model.cfg.to_json(), "tokenizer": tokenizer.to_str(), "step": str(step)},
        )
        onnx.checker.check_model(graph)
        path = out_dir / f"{model.cfg.attention}.step{step}.onnx"
        onnx.save(graph, str(path))
        paths.append(path)
    return paths
