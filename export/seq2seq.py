"""Export the translation models (issue #10) to self-contained ONNX graphs.

    python -m export.seq2seq            # exported/seq2seq_<kind>.safetensors -> graphs

Graphs per kind (symbols: S source tokens, T target tokens, L layers, H heads, N GRU
layers, d hidden width, V target vocabulary; inputs int64, outputs float32):

* every kind, ``seq2seq_<kind>.encoder.onnx``: ``src_ids`` (1, S) -> ``memory`` (1, S, d)
  and ``context`` (N, 1, d): the RNN's outputs and last state, or the transformer's
  encoder output and (``cross_k``, ``cross_v``) (L, 1, H, S, d_head), the decoder's
  cross-attention keys and values computed once per sentence;
* RNN kinds, ``seq2seq_<kind>.step.onnx``: ``token`` (1,), ``hidden`` (N, 1, d),
  ``memory`` (1, S, d), ``context0`` (1, d) -> ``logits`` (1, V), ``hidden_out``
  (N, 1, d), ``cross_attn`` (1, S) (all zero for ``gru``), ``context`` (1, d);
* transformer, ``seq2seq_transformer.step.onnx``: ``tgt_ids`` (1, T) (``<bos>`` and the
  prefix so far), ``cross_k``, ``cross_v`` -> ``logits`` (1, V) of the last position,
  its ``cross_attn`` (L, H, S) and its cross-attention query ``cross_q`` (L, H, d_head):
  decoding with the encoder's keys and values cached;
* transformer, ``seq2seq_transformer.inspect.onnx``: ``src_ids`` (1, S), ``tgt_ids``
  (1, T) -> ``logits`` (1, T, V) and every named tensor of
  ``TransformerSeq2Seq.forward(inspect=True)`` (``enc_self_attn`` (L, H, S, S),
  ``dec_self_attn`` (L, H, T, T), ``cross_attn`` (L, H, T, S), queries, keys, values).

Each graph carries ``config``, ``src_tokenizer`` and ``tgt_tokenizer`` metadata, passes
``onnx.checker`` and keeps its sequence axes symbolic (``export.checks.check_graph``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch
from safetensors import safe_open
from safetensors.torch import load_file
from tokenizers import Tokenizer
from torch import nn

from export.checks import check_graph
from export.graphs import add_metadata
from export.torch_export import export_module
from models.checkpoint import SHIPPED_DIR
from models.seq2seq import build_seq2seq
from models.seq2seq.config import SEQ2SEQ_KINDS, Seq2SeqConfig

INSPECT_OUTPUTS = (
    "logits", "enc_self_attn", "enc_q", "enc_k", "enc_v", "dec_self_attn", "dec_q", "dec_k",
    "dec_v", "cross_attn", "cross_q", "cross_k", "cross_v",
)  # fmt: skip


class RNNEncoder(nn.Module):
    """src_ids (1, S) -> (memory (1, S, d), context (N, 1, d))."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, src_ids):
        return self.model.encoder(src_ids)


class RNNStep(nn.Module):
    """(token, hidden, memory, context0) -> (logits, hidden_out, cross_attn, context)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, token, hidden, memory, context0):
        key_mask = torch.ones(memory.shape[:2], dtype=torch.bool)  # (1, S): no padding
        return self.model.decoder.step(token, hidden, memory, key_mask, context0)


class TransformerEncoder(nn.Module):
    """src_ids (1, S) -> (memory (1, S, C), cross_k, cross_v (L, 1, H, S, d_head))."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, src_ids):
        mask = torch.ones_like(src_ids, dtype=torch.bool)[:, None, None, :]  # (1, 1, 1, S)
        memory, _ = self.model.encode(src_ids, mask)  # (1, S, C)
        return (memory, *self.model.cross_keys_values(memory))


class TransformerStep(nn.Module):
    """(tgt_ids (1, T), cross_k, cross_v) -> (logits (1, V), cross_attn (L, H, S),
    cross_q (L, H, d_head)) of the last position."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, tgt_ids, cross_k, cross_v):
        mask = torch.ones(1, 1, 1, cross_k.shape[3], dtype=torch.bool)  # (1, 1, 1, S)
        logits, caches = self.model.decode(tgt_ids, cross_k, cross_v, mask)  # (1, T, V)
        cross = torch.stack([c["cross"]["attn"][0, :, -1] for c in caches])  # (L, H, S)
        query = torch.stack([c["cross"]["q"][0, :, -1] for c in caches])  # (L, H, d_head)
        return logits[:, -1], cross, query


class TransformerInspect(nn.Module):
    """(src_ids, tgt_ids) -> ``INSPECT_OUTPUTS``."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, src_ids, tgt_ids):
        logits, cache = self.model(src_ids, tgt_ids, inspect=True)
        return (logits, *(cache[n] for n in INSPECT_OUTPUTS[1:]))


def export_seq2seq(model, vocabs: tuple[Tokenizer, Tokenizer], out_dir: Path) -> list[Path]:
    """Write ``model``'s graphs (module docstring) into ``out_dir``; returns their paths.

    Raises:
        ValueError: a graph fails ``check_graph`` (checker, external data, a frozen axis).
    """
    model, cfg = model.eval(), model.cfg
    prefix, S, T = (
        f"seq2seq_{cfg.kind}",
        torch.export.Dim("S", max=512),
        torch.export.Dim("T", max=512),
    )
    src, tgt = torch.tensor([[4, 5, 6, 7, 8, 2]]), torch.tensor([[1, 4, 5, 6]])
    specs = []  # (module, args, name, inputs, outputs, dynamic, symbolic)
    if cfg.kind == "transformer":
        L, H, D = cfg.n_layer, cfg.n_head, cfg.d_head
        kv = torch.zeros(L, 1, H, 6, D), torch.ones(L, 1, H, 6, D)  # distinct: aliased inputs merge
        specs += [
            (TransformerEncoder(model), (src,), "encoder", ["src_ids"],
             ["memory", "cross_k", "cross_v"], {"src_ids": {1: S}}, {"src_ids": 1}),
            (TransformerStep(model), (tgt, *kv), "step", ["tgt_ids", "cross_k", "cross_v"],
             ["logits", "cross_attn", "cross_q"],
             {"tgt_ids": {1: T}, "cross_k": {3: S}, "cross_v": {3: S}},
             {"tgt_ids": 1, "cross_k": 3}),
            (TransformerInspect(model), (src, tgt), "inspect", ["src_ids", "tgt_ids"],
             list(INSPECT_OUTPUTS), {"src_ids": {1: S}, "tgt_ids": {1: T}},
             {"src_ids": 1, "tgt_ids": 1}),
        ]  # fmt: skip
    else:
        N, d = cfg.n_layer, cfg.d_model
        step_args = (
            torch.tensor([1]),
            torch.zeros(N, 1, d),
            torch.zeros(1, 6, d),
            torch.zeros(1, d),
        )
        specs += [  # the TorchScript exporter: ONNX's GRU operator, a symbolic S
            (RNNEncoder(model), (src,), "encoder", ["src_ids"], ["memory", "context"],
             {"src_ids": {1: "S"}, "memory": {1: "S"}}, {"src_ids": 1}),
            (RNNStep(model), step_args, "step", ["token", "hidden", "memory", "context0"],
             ["logits", "hidden_out", "cross_attn", "context"],
             {"memory": {1: "S"}, "cross_attn": {1: "S"}}, {"memory": 1}),
        ]  # fmt: skip
    metadata = {
        "config": cfg.to_json(),
        "src_tokenizer": vocabs[0].to_str(),
        "tgt_tokenizer": vocabs[1].to_str(),
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for module, args, role, inputs, outputs, dynamic, symbolic in specs:
        path = out_dir / f"{prefix}.{role}.onnx"
        export_module(module, args, path, inputs, outputs, dynamic, cfg.kind == "transformer")
        add_metadata(path, metadata)
        check_graph(path, symbolic)
        paths.append(path)
    return paths


def load_seq2seq(path: Path):
    """A checkpoint of ``training.seq2seq`` -> ``(model in eval mode, (src_tok, tgt_tok),
    training record)``."""
    with safe_open(str(path), "pt") as f:
        meta = f.metadata()
    cfg = Seq2SeqConfig.from_json(meta["config"])
    model = build_seq2seq(cfg)
    model.load_state_dict(load_file(str(path)))
    vocabs = Tokenizer.from_str(meta["src_tokenizer"]), Tokenizer.from_str(meta["tgt_tokenizer"])
    return model.eval(), vocabs, json.loads(meta.get("training", "{}"))


def main(argv: list[str] | None = None) -> None:
    """CLI entry: export the shipped translation checkpoints (or the ones named)."""
    parser = argparse.ArgumentParser(description="Export the translation models to ONNX.")
    parser.add_argument("checkpoints", nargs="*", type=Path)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    shipped = [SHIPPED_DIR / f"seq2seq_{k}.safetensors" for k in SEQ2SEQ_KINDS]
    for ckpt in args.checkpoints or shipped:
        model, vocabs, _ = load_seq2seq(ckpt)
        for path in export_seq2seq(model, vocabs, args.out or ckpt.parent):
            print(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
