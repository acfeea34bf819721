"""Export a checkpoint to self-contained ONNX graphs that follow ``models/contract.py``.

``python -m export.graphs runs/mine.safetensors`` writes ``<stem>.inspect.onnx``, ``<stem>.lab.onnx``,
``<stem>.fast.onnx`` and, for the recurrent kinds (linear, delta), ``<stem>.step.onnx`` next to each
checkpoint (or into ``--out``). With no checkpoints named, ``python -m export.graphs``
exports every shipped checkpoint (``exported/softmax|linear|delta.safetensors``) into
``exported/``. The model card is written by ``python -m training.evaluate`` (evaluation
measures; ``export/card.py`` writes), so this module imports nothing of training.

Softmax and linear models go through the TorchScript exporter (``dynamo=False``) with a
dynamic sequence axis, then onnxscript's optimizer (the passes dynamo's ``optimize=True``
runs): 0.3-1.2 s a graph for a tiny model against dynamo's 5 s, the same numbers
(``tests/export``), and their lab graph agrees with their inspect graph (1e-6). DeltaNet's
graphs go through ``torch.onnx.export(dynamo=True)``: its token scan is a loop that
tracing would unroll, freezing T (``export.torch_export.traced_export``). Weights inside
the file (``external_data=False``); every graph is checked with ``onnx.checker`` and its
sequence axis asserted symbolic (an exporter can silently freeze it to the example's
length). The linear fast graph splits T into chunks of 64 (``models/causal_product.py``):
the TorchScript exporter records the padding sizes as Shape/Mod/Pad/Reshape nodes and
keeps T symbolic, where ``torch.export`` could not prove the arithmetic for every T.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import onnx
import onnx.utils
import torch
from tokenizers import Tokenizer
from torch import nn
from tqdm import tqdm

from export.checks import check_graph, probe_lengths, square_sequence_tensors
from export.lab import export_lab_graph
from export.torch_export import export_for
from models import contract
from models.attention import ATTENTION_REGISTRY
from models.checkpoint import SHIPPED_DIR, load_checkpoint, shipped_checkpoint
from models.config import SHIPPED_KINDS
from models.transformer import Transformer


class InspectGraph(nn.Module):
    """input_ids (1, T) -> the contract's inspect outputs, in contract order, then the
    block outputs of every layer (``contract.block_outputs``, the same for every kind)."""

    def __init__(self, model: Transformer):
        super().__init__()
        self.model = model
        cfg = model.cfg
        self.names = contract.inspect_outputs(cfg.attention) + contract.block_outputs(cfg.n_layer)

    def forward(self, input_ids: torch.Tensor):
        """int64 (1, T) -> the contract's inspect outputs, in ``contract.inspect_outputs`` order."""
        logits, cache = self.model(input_ids, inspect=True)
        cache["logits"] = logits  # (1, T, V)
        return tuple(cache[n] for n in self.names)


class FastGraph(nn.Module):
    """input_ids (1, T) -> logits (1, T, V). For linear attention no T x T tensor and no
    state per token: the causal product runs in chunks of 64 tokens
    (``models/causal_product.py``), O(T·d) memory."""

    def __init__(self, model: Transformer):
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor):
        """int64 (1, T) -> logits (1, T, V)."""
        return self.model(input_ids)  # (1, T, V)


class StepGraph(nn.Module):
    """(token, position, state, carried) -> (logits, state_out, carried_out); carried is
    linear attention's normalizer or DeltaNet's convolution window (``contract.KIND_STEP``)."""

    def __init__(self, model: Transformer):
        super().__init__()
        self.model = model

    def forward(self, token, position, state, carried):
        """See ``Transformer.step``: (1, 1), (1,), (L, H, D, D), carried -> logits (1, V), S, ..."""
        return self.model.step(token, position, state, carried)


def export_fast_graph(model: Transformer, path: Path, example: torch.Tensor, T) -> Path:
    """:class:`FastGraph` of ``model`` (eval mode) to ``path``: input ids (1, T) -> logits
    (1, T, V). Linear attention runs chunked (``models/causal_product.py``) and goes
    through the TorchScript exporter and onnxscript's optimizer (see the module
    docstring); DeltaNet's token scan through dynamo with ``T``, a ``torch.export.Dim``.
    ``example``: int64 (1, T0).

    Returns:
        ``path``, written (not yet checked: :func:`export.checks.check_graph`).
    """
    names = [contract.INPUT_NAME]  # linear: TorchScript (dynamo freezes T through the padding)
    export_for(model.cfg, FastGraph(model), (example,), path, names, ["logits"], {names[0]: {1: T}})
    return path


def prune_to_logits(inspect_path: Path, path: Path) -> Path:
    """The fast graph of a softmax model: its inspect graph with ``logits`` as the only
    output and every node and initializer that only the other outputs need removed
    (``onnx.utils.Extractor``). Softmax attention computes the T x T weights to get the
    logits either way, so this is the graph ``FastGraph`` would trace, found in
    milliseconds instead of a second ``torch.onnx.export`` (~1 s on the 2-core machine).
    Its logits equal the inspect graph's to float32 rounding (tests/export/test_export.py).

    Returns:
        ``path``, written.
    """
    inspect = onnx.load(str(inspect_path))
    fast = onnx.utils.Extractor(inspect).extract_model([contract.INPUT_NAME], ["logits"])
    onnx.save(fast, str(path))
    return path


def add_metadata(path: Path, metadata: dict[str, str]) -> None:
    """Store string ``metadata`` in the graph's ``metadata_props`` (in place), and drop
    the exporter's per-node debug metadata (FX node text, module paths: ~6% of the file)."""
    model = onnx.load(str(path))
    for node in model.graph.node:
        del node.metadata_props[:]
        node.doc_string = ""
    onnx.helper.set_model_props(model, metadata)
    onnx.save(model, str(path))


def export_model(
    model: Transformer,
    out_dir: Path,
    tokenizer: Tokenizer,
    prefix: str | None = None,
    inspect_only: bool = False,
    on_graph: Callable[[str], None] | None = None,
    lab: bool = True,
) -> list[Path]:
    """Write the inspect, fast, (recurrent kinds: linear, delta) step and lab graphs of
    ``model`` (with ``inspect_only``, no fast or step graph: a served softmax model runs its
    inspect graph's logits, ``ui/served.py``; the lab graph always, ``export/lab.py``).

    Each graph carries ``config`` and ``tokenizer`` JSON in its metadata, so
    the app needs nothing else to run it.

    Args:
        model: the PyTorch model (put in eval mode here).
        out_dir: folder to write into.
        tokenizer: the model's tokenizer.
        prefix: file prefix; defaults to the attention kind.
        on_graph: called with each graph's file name before it is made (progress).
        lab: write the lab graph (an upload's is made later, when a lab view asks:
            :func:`export_lab`).

    Returns:
        The written paths, each already validated by :func:`export.checks.check_graph`.

    Raises:
        ValueError: if a graph fails :func:`export.checks.check_graph`, or the linear fast graph
            has a tensor that grows like T x T (:func:`export.checks.square_sequence_tensors`).
    """
    model = model.eval()
    cfg = model.cfg
    prefix = prefix or cfg.attention
    out_dir.mkdir(parents=True, exist_ok=True)
    max_t = cfg.context_length if cfg.position_scheme == "learned" else 1 << 16
    T = torch.export.Dim("T", min=1, max=max_t)
    # DeltaNet's inspect graph carries one column per possible key: T <= context_length
    T_inspect = (
        torch.export.Dim("T", min=1, max=cfg.context_length) if cfg.attention == "delta" else T
    )
    example = torch.randint(0, cfg.vocab_size, (1, min(8, cfg.context_length)))
    recurrent = ATTENTION_REGISTRY[cfg.attention].recurrent  # has a one-token step graph
    paths = []
    said = on_graph or (lambda name: None)
    said(f"{prefix}.inspect.onnx")

    path = out_dir / f"{prefix}.inspect.onnx"
    names = contract.inspect_outputs(cfg.attention) + contract.block_outputs(cfg.n_layer)
    inputs = [contract.INPUT_NAME]
    export_for(
        cfg, InspectGraph(model), (example,), path, inputs, names, {inputs[0]: {1: T_inspect}}
    )
    paths.append(path)

    if inspect_only:
        recurrent = False
    elif not recurrent:  # softmax: the same computation, pruned (no second trace, ~8 s)
        said(f"{prefix}.fast.onnx")
        paths.append(prune_to_logits(path, out_dir / f"{prefix}.fast.onnx"))
    else:  # linear: another computation (chunks, no T x T tensor), traced on its own
        said(f"{prefix}.fast.onnx")
        paths.append(export_fast_graph(model, out_dir / f"{prefix}.fast.onnx", example, T))

    if recurrent:
        L, H, D, C = cfg.n_layer, cfg.n_head, cfg.d_head, cfg.d_model
        carried = torch.zeros(L, 3, 3, C) if cfg.attention == "delta" else torch.zeros(L, H, D)
        args = (
            torch.zeros(1, 1, dtype=torch.long),
            torch.zeros(1, dtype=torch.long),
            torch.zeros(L, H, D, D),
            carried,
        )
        path = out_dir / f"{prefix}.step.onnx"
        said(path.name)
        inputs, outputs = contract.step_names(cfg.attention)
        export_for(cfg, StepGraph(model), args, path, inputs, outputs, None)
        paths.append(path)

    if lab:  # interventions: ablation, patching, lens, attribution
        said(f"{prefix}.lab.onnx")
        paths.append(export_lab_graph(model, out_dir / f"{prefix}.lab.onnx"))

    said("checks")
    for path in paths:
        add_metadata(path, {"config": cfg.to_json(), "tokenizer": tokenizer.to_str()})
        symbolic = {} if path.name.endswith("step.onnx") else {contract.INPUT_NAME: 1}
        graph = check_graph(path, symbolic)
        if recurrent and path.name.endswith("fast.onnx"):
            if square := square_sequence_tensors(graph, probe_lengths(cfg)):
                raise ValueError(f"{path.name} builds T x T tensors: {', '.join(square[:5])}")
    return paths


def export_lab(model: Transformer, out_dir: Path, tokenizer: Tokenizer, prefix: str) -> Path:
    """The lab graph alone (``export/lab.py``), with the metadata and checks of
    :func:`export_model`'s graphs: ``<prefix>.lab.onnx`` in ``out_dir``.

    Raises:
        ValueError: if the graph fails :func:`export.checks.check_graph`.
    """
    path = export_lab_graph(model.eval(), out_dir / f"{prefix}.lab.onnx")
    add_metadata(path, {"config": model.cfg.to_json(), "tokenizer": tokenizer.to_str()})
    check_graph(path, {contract.INPUT_NAME: 1})
    return path


def targets(args: argparse.Namespace) -> tuple[list[Path], Path | None]:
    """``(checkpoints, out folder or None for beside each)`` for parsed arguments: with
    no checkpoints named, the shipped ones and ``exported/``."""
    if args.checkpoints:
        return list(args.checkpoints), args.out
    shipped = [shipped_checkpoint(kind) for kind in SHIPPED_KINDS]
    return shipped, args.out or SHIPPED_DIR


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``python -m export.graphs``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "checkpoints", nargs="*", type=Path, help=".safetensors checkpoints (default: shipped)"
    )
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: beside)")
    return parser


def main(argv: list[str] | None = None) -> None:
    checkpoints, out_dir = targets(build_parser().parse_args(argv))
    for ckpt in checkpoints:
        model, tokenizer, _meta = load_checkpoint(ckpt)
        steps = 3 + ATTENTION_REGISTRY[model.cfg.attention].recurrent + 1  # + the checks
        with tqdm(total=steps, desc=f"export {ckpt.name}", unit="step") as bar:  # 8-60 s a trace
            paths = export_model(model, out_dir or ckpt.parent, tokenizer, prefix=ckpt.stem,
                                 on_graph=lambda name: (bar.update(), bar.set_postfix_str(name)))  # fmt: skip
        for path in paths:
            print(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
