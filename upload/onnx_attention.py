"""Find a foreign ONNX language model's token input, logits and attention (worker side).

A graph not made by this project has none of the contract's names. What a plain
``torch.onnx.export`` of a GPT-style model (either exporter) does have:

* an integer input of shape (batch, T) or (T): the token ids (``upload/onnx_inputs.py``
  tells it from an attention mask, positions or past keys and values);
* a float output of shape (…, T, V): the logits;
* per attention layer one ``Softmax`` node whose output is (…, T, T) over its last
  axis (query rows, key columns: the attention probabilities), or, at opset 23 and
  later, ONNX's ``Attention`` operator, which returns the same probabilities as its
  optional fourth output when asked (``qk_matmul_output_mode`` = 3).

Static analysis names the candidates (:func:`candidates`) and adds them, cast to
float32, as graph outputs (:func:`instrument`); which of them really are (…, T, T)
is told by running the graph at two lengths (:func:`classify`): an axis that is T
on both runs is a T-axis, any other axis is the same on both. Layers are the
attention nodes in graph order (ONNX graphs are topologically sorted); heads are
the axes before (T, T), batch 1 (a (B, T, T) softmax is one head).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import onnx
from onnx import helper

from upload.errors import UploadError

PREFIX = "attnviz_"  # names of what this module adds to a graph
_PROBS_MODE = 3  # Attention's qk_matmul_output_mode: the output after the softmax


@dataclass
class Candidate:
    """One node that may give attention probabilities.

    Attributes:
        op: "Softmax" or "Attention".
        probs: the graph output (float32) that returns its probabilities.
        scores: the graph output that returns what the Softmax receives, or None
            (``Attention`` computes its scores inside itself).
        axis: the Softmax's axis as written (None: the key axis by construction).
        old_axis: True for Softmax before opset 13 (default axis 1, softmax over the
            flattened axes from ``axis`` on).
    """

    op: str
    probs: str
    scores: str | None
    axis: int | None
    old_axis: bool = False


@dataclass
class Found:
    """What :func:`classify` found: the attention candidates that are (…, T, T) over
    the key axis, in graph order, their common head count, and the others."""

    attention: list[Candidate] = field(default_factory=list)
    n_head: int = 0
    others: list[tuple[Candidate, tuple[int, ...]]] = field(default_factory=list)


def _opset(model: onnx.ModelProto) -> int:
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1)


def _attribute(node: onnx.NodeProto, name: str):
    found = [a for a in node.attribute if a.name == name]
    return helper.get_attribute_value(found[0]) if found else None


def candidates(model: onnx.ModelProto) -> list[Candidate]:
    """Every Softmax and Attention node of the main graph, in graph order, with the
    names their outputs will have once :func:`instrument` added them."""
    old = _opset(model) < 13
    found = []
    for i, node in enumerate(model.graph.node):
        probs = f"{PREFIX}probs_{i}"
        if node.op_type == "Softmax" and node.domain in ("", "ai.onnx"):
            axis = _attribute(node, "axis")
            axis = (1 if old else -1) if axis is None else int(axis)
            found.append(Candidate("Softmax", probs, f"{PREFIX}scores_{i}", axis, old))
        elif node.op_type == "Attention" and node.domain in ("", "ai.onnx"):
            found.append(Candidate("Attention", probs, None, None))
    return found


def _cast(source: str, target: str) -> onnx.NodeProto:
    return helper.make_node("Cast", [source], [target], to=onnx.TensorProto.FLOAT)


def instrument(model: onnx.ModelProto) -> tuple[onnx.ModelProto, list[Candidate]]:
    """A copy of ``model`` that also returns every candidate's probabilities (and a
    Softmax's input), cast to float32, under the names :func:`candidates` gives.

    An Attention node is asked for its probabilities: its fourth output is named and
    its ``qk_matmul_output_mode`` set to 3 (softmax output); where the graph itself uses
    that output, a copy of the node is asked instead, so the graph computes what it did.
    """
    out = onnx.ModelProto()
    out.CopyFrom(model)
    found = candidates(out)
    nodes = list(out.graph.node)
    added = []
    by_index = {int(c.probs.rsplit("_", 1)[1]): c for c in found}
    for i, node in enumerate(nodes):
        c = by_index.get(i)
        if c is None:
            continue
        if c.op == "Softmax":
            added += [_cast(node.output[0], c.probs), _cast(node.input[0], c.scores)]
            continue
        if len(node.output) > 3 and node.output[3]:  # the graph uses its own output 3:
            node = helper.make_node("Attention", node.input, [f"{PREFIX}y_{i}"],  # ask a copy
                                    name=f"{PREFIX}attention_{i}")  # fmt: skip
            node.attribute.extend(
                a for a in nodes[i].attribute if a.name != "qk_matmul_output_mode"
            )
            added.append(node)
        while len(node.output) < 4:
            node.output.append("")
        node.output[3] = f"{PREFIX}qk_{i}"
        mode = [a for a in node.attribute if a.name == "qk_matmul_output_mode"]
        if mode:
            mode[0].i = _PROBS_MODE
        else:
            node.attribute.append(helper.make_attribute("qk_matmul_output_mode", _PROBS_MODE))
        added.append(_cast(node.output[3], c.probs))
    out.graph.node.extend(added)
    for c in found:
        for name in (c.probs, c.scores):
            if name is not None:
                out.graph.output.append(
                    helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None)
                )
    return out, found


def _is_attention(c: Candidate, shapes: list[tuple[int, ...]], lengths: list[int]) -> bool:
    """(…, T, T) on every trial length, the same axes before, softmax over the last."""
    rank, runs = len(shapes[0]), list(zip(shapes, lengths, strict=True))
    if rank < 2 or any(len(s) != rank or s[-2:] != (T, T) for s, T in runs):
        return False
    if any(s[:-2] != shapes[0][:-2] for s in shapes):
        return False
    if c.axis is None:
        return True
    axis = c.axis + rank if c.axis < 0 else c.axis
    return axis == rank - 1  # before opset 13, axis r-1 flattens only the last axis too


def classify(
    found: list[Candidate], shapes: dict[str, list[tuple[int, ...]]], lengths: list[int]
) -> Found:
    """Split the candidates by their output shapes on the trial ``lengths``.

    Args:
        found: the candidates, graph order.
        shapes: output name -> its shape on each trial length.
        lengths: the trial lengths T (two different ones unless the input is fixed).

    Raises:
        UploadError: when the attention found has different head counts per layer.
    """
    result = Found()
    heads = []
    for c in found:
        got = shapes[c.probs]
        if _is_attention(c, got, lengths):
            result.attention.append(c)
            heads.append(math.prod(got[0][:-2]))  # batch 1: the axes before (T, T)
        else:
            result.others.append((c, got[0]))
    if len(set(heads)) > 1:
        raise UploadError(
            f"the attention softmaxes found have different numbers of heads ({heads}); "
            "the app shows layers of the same head count"
        )
    result.n_head = heads[0] if heads else 0
    return result


def not_found_line(name: str, found: Found) -> str:
    """The one line for a graph without attention: what was looked for, what was found."""
    n_soft = sum(c.op == "Softmax" for c, _ in found.others)
    n_att = len(found.others) - n_soft
    shapes = sorted({str(s) for c, s in found.others})[:3]
    other = (
        f"{n_soft} Softmax node(s)"
        + (f" and {n_att} Attention node(s)" if n_att else "")
        + f" of other shapes, e.g. {', '.join(shapes)}"
        if found.others
        else "the graph has no Softmax or Attention node"
    )
    return (
        f"{name}: no attention found: looked for Softmax nodes whose output is (…, T, T) "
        f"over the key axis (and ONNX Attention operators); found 0 ({other})"
    )


def is_logits(shapes: list[tuple[int, ...]], lengths: list[int]) -> bool:
    """(…, T, V) on every trial length: the axis before last is T, V the same on every
    run, every axis before them of size 1 (batch)."""
    if len(shapes[0]) < 2 or any(len(s) != len(shapes[0]) for s in shapes):
        return False
    runs = zip(shapes, lengths, strict=True)
    return all(s[-2] == T and s[-1] == shapes[0][-1] and set(s[:-2]) <= {1} for s, T in runs)
