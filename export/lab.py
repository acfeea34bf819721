"""Export the lab graph (``<prefix>.lab.onnx``): a batch of runs with a hand on every head.

``models/lab.py`` holds the computation and ``models/contract.py`` its inputs and outputs.
Through the exporter of the inspect graph (``export.torch_export.export_for``: TorchScript
and onnxscript's optimizer for softmax and linear, dynamo for DeltaNet): with nothing
overridden its numbers are the inspect graph's (measured: max difference 0 for the shipped
models, 1.5e-7 of the largest head output for a tiny linear one; a TorchScript lab graph
beside a dynamo inspect graph differed by 1.3e-6, past the 1e-6 this graph promises, so
the two go together). The batch (B) and sequence (T) axes are symbolic (DeltaNet's: T
only, B = 1). Weights inside the file.
"""

from __future__ import annotations

from pathlib import Path

import torch

from export.torch_export import export_for
from models import contract
from models.lab import LabGraph, example_inputs
from models.transformer import Transformer


def export_lab_graph(model: Transformer, path: Path) -> Path:
    """:class:`models.lab.LabGraph` of ``model`` (eval mode) to ``path``.

    Returns:
        ``path``, written; ``export.graphs.export_model`` adds the metadata and checks it
        (``export.checks.check_graph``: the T axis symbolic).
    """
    model = model.eval()
    cfg, graph = model.cfg, LabGraph(model)
    inputs, outputs = contract.LAB_INPUTS, contract.LAB_OUTPUTS
    max_t = cfg.context_length if cfg.position_scheme == "learned" else 1 << 16
    T = torch.export.Dim("T", min=2, max=max_t)
    batch = {0: torch.export.Dim("B", min=1, max=4096)}
    if cfg.attention == "delta":
        # DeltaNet's token scan carries one column per key (T <= context) and cannot carry
        # a symbolic batch (torch's scan decomposition fails on it): its lab graph runs
        # one run at a time, B = 1, and callers loop.
        T, batch = torch.export.Dim("T", min=2, max=cfg.context_length), {}
    args = example_inputs(model, B=2 if batch else 1, T=min(8, cfg.context_length))
    dynamic = {n: {**batch, _time_axis(n): T} for n in inputs}
    export_for(cfg, graph, args, path, inputs, outputs, dynamic)
    return path


def _time_axis(name: str) -> int:
    """The T axis of a lab input: ``contract.LAB_AXES`` spells each input's axes."""
    return contract.LAB_AXES[name].index("T")
