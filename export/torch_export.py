"""The one call of ``torch.onnx.export``: every graph this project exports goes through
:func:`export_module` (weights inside the file, opset :data:`OPSET`, the exporter's
warnings quiet, a stale ``.onnx.data`` removed)."""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

import onnx
import torch
from torch import nn

OPSET = 18


def export_module(
    module: nn.Module,
    args: tuple,
    path: Path,
    input_names,
    output_names,
    dynamic,
    dynamo: bool = True,
    optimize: bool = False,
    keep_names: bool = False,
):
    """``torch.onnx.export`` of ``module`` on ``args`` to ``path``, weights inside the file,
    opset OPSET. ``dynamic``: ``dynamic_shapes`` (input -> {axis: torch.export.Dim}) for
    the dynamo exporter, or with ``dynamo=False`` the TorchScript exporter's
    ``dynamic_axes`` (name -> {axis: "S"}): it keeps ``nn.GRU`` as ONNX's GRU operator,
    where dynamo freezes the sequence length. ``optimize`` (TorchScript only): the
    exporter's own constant folding off (it stores a transposed copy of a tied embedding,
    +1.1 MB for the shipped models), then onnxscript's optimizer, as dynamo runs it
    (folds the shape arithmetic, ~1,200 nodes to ~400), and no ``value_info``. A stale
    ``.onnx.data`` beside it is removed. ``keep_names`` (dynamo only): no optimisation, so
    every parameter stays an initializer named by its module path (``model.<key>``), for
    graphs whose weights are put in later (``export/history.py``)."""
    logging.getLogger("torch.onnx").setLevel(logging.ERROR)
    if dynamo:
        shapes = {"dynamic_shapes": dynamic, "optimize": not keep_names}
    else:
        shapes = {"dynamic_axes": _axis_names(dynamic)}
    if not dynamo and optimize:
        shapes["do_constant_folding"] = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            module,
            args,
            str(path),
            dynamo=dynamo,
            external_data=False,
            input_names=list(input_names),
            output_names=list(output_names),
            opset_version=OPSET,
            verbose=False,
            **shapes,
        )
    if not dynamo and optimize:
        import onnxscript.optimizer

        graph = onnxscript.optimizer.optimize(onnx.load(str(path)))
        del graph.graph.value_info[:]
        onnx.save(graph, str(path))
    stale = path.with_name(path.name + ".data")
    if stale.exists():
        stale.unlink()


def _axis_names(dynamic):
    """TorchScript's ``dynamic_axes`` from either spelling: name -> {axis: "S"}, with a
    ``torch.export.Dim`` replaced by its name (callers spell one axis once for both)."""
    if dynamic is None:
        return None
    return {
        name: {axis: getattr(dim, "__name__", dim) for axis, dim in axes.items()}
        for name, axes in dynamic.items()
    }


def traced_export(cfg) -> bool:
    """Whether a model of ``cfg`` (``models.config.ModelConfig``) exports through the
    TorchScript exporter and onnxscript's optimizer (softmax, linear: no loop over T, and
    4-18x faster than dynamo: 0.3-1.2 s against 5 s for a tiny model's inspect graph) or
    must go through dynamo (DeltaNet: its token scan is a loop that tracing would unroll,
    freezing T)."""
    return cfg.attention != "delta"


def export_for(cfg, module: nn.Module, args: tuple, path: Path, input_names, output_names, dynamic):
    """:func:`export_module` through the exporter :func:`traced_export` picks for a model of
    ``cfg``: TorchScript and onnxscript's optimizer, or dynamo. ``dynamic``: input ->
    {axis: ``torch.export.Dim``} (TorchScript reads each Dim's name), or None."""
    traced = traced_export(cfg)
    export_module(
        module, args, path, input_names, output_names, dynamic, dynamo=not traced, optimize=traced
    )
