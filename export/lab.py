"""Export the lab graph (``<prefix>.lab.onnx``): a batch of runs with a hand on every head.

``models/lab.py`` holds the computation and ``models/contract.py`` its inputs and outputs.
Exported with ``torch.onnx.export(dynamo=True)``, the batch (B) and sequence (T) axes
symbolic (DeltaNet's: T only), weights inside the file.
"""

from __future__ import annotations

from pathlib import Path

import torch

from export.torch_export import export_module
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
    cfg = model.cfg
    max_t = cfg.context_length if cfg.position_scheme == "learned" else 1 << 16
    if cfg.attention == "delta":  # its scan carries one column per key: T <= context
        max_t = cfg.context_length
    T = torch.export.Dim("T", min=2, max=max_t)
    # DeltaNet's token scan cannot carry a symbolic batch (torch's scan decomposition
    # fails on it): its lab graph runs one run at a time, B = 1, and callers loop.
    batch = cfg.attention != "delta"
    args = example_inputs(model, B=2 if batch else 1, T=min(8, cfg.context_length))
    B = {0: torch.export.Dim("B", min=1, max=4096)} if batch else {}
    dynamic = {n: {**B, _time_axis(n): T} for n in contract.LAB_INPUTS}
    export_module(LabGraph(model), args, path, contract.LAB_INPUTS, contract.LAB_OUTPUTS, dynamic)
    return path


def _time_axis(name: str) -> int:
    """The T axis of a lab input: ``contract.LAB_AXES`` spells each input's axes."""
    return contract.LAB_AXES[name].index("T")
