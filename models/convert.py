"""Turn uploaded files into a runnable, inspectable model, safely.

Three kinds of upload (format judged by content, checked against the extension):

* this project's ``.safetensors`` checkpoint: loaded by ``models/checkpoint.py``;
* a nanoGPT ``ckpt.pt`` plus its character vocabulary ``meta.pkl``: converted
  to our ``Transformer`` (the same GPT-2 architecture, renamed and with
  ``c_attn`` split into q/k/v projections);
* ``.onnx`` graphs that follow ``models/contract.py``: validated, never converted.

Checkpoints are exported to ONNX in a temporary folder and opened from bytes.
Every failure is a ``ValueError`` (mostly :class:`UploadError`) with a message
a student can act on. The safety checks live in ``models/upload_safety.py``.

CLI: ``python -m models.convert ckpt.pt --meta meta.pkl --out DIR`` writes
``DIR/<name>.safetensors`` and its ONNX graphs.
"""

from __future__ import annotations

import argparse
import math
import re
import tempfile
from pathlib import Path, PurePath

import onnx
import torch
from tokenizers import Regex, Tokenizer, decoders, pre_tokenizers
from tokenizers import models as tk_models

from models.checkpoint import build_model, load_checkpoint, save_checkpoint
from models.config import ModelConfig
from models.export import export_model
from models.runtime import OnnxModel, load_graphs
from models.tokenizer import UNK
from models.transformer import Transformer
from models.upload_safety import (
    MAX_FILES,
    MAX_UPLOAD_BYTES,
    UploadError,
    check_config_size,
    check_size,
    expect_format,
    graph_role,
    plain_unpickle,
    safe_torch_load,
    safetensors_metadata,
    sniff_format,
    validate_onnx,
)

__all__ = [
    "MAX_UPLOAD_BYTES",
    "UploadError",
    "sniff_format",
    "validate_onnx",
    "load_meta_pkl",
    "char_tokenizer",
    "convert_nanogpt",
    "load_our_checkpoint",
    "load_upload",
]

MASK_BUFFER = re.compile(r"transformer\.h\.\d+\.attn\.bias")  # nanoGPT's causal mask, not a weight
# Our parameter names -> nanoGPT's, so errors name the key in the student's file.
OURS_TO_NANOGPT = [
    (r"\bblocks\.(\d+)\.attn\.[qkv]_proj\.", r"transformer.h.\1.attn.c_attn."),
    (r"\bblocks\.(\d+)\.attn\.o_proj\.", r"transformer.h.\1.attn.c_proj."),
    (r"\bblocks\.(\d+)\.", r"transformer.h.\1."),
    (r"(?<![\w.])(wte|wpe|ln_f)\.", r"transformer.\1."),
]


def load_meta_pkl(data: bytes, name: str = "meta.pkl") -> dict:
    """nanoGPT's character vocabulary, unpickled without ever loading a class or function.

    Returns:
        The dict, with ``stoi`` (char -> id) and ``itos`` (id -> char) checked to
        be inverse maps over ids 0..n-1.

    Raises:
        UploadError: if the pickle asks for any global ("refused: it tries to load
            'posix.system'"), is damaged, or ``stoi``/``itos`` are missing or disagree.
    """
    check_size(name, data)
    meta = plain_unpickle(name, data)
    if not isinstance(meta, dict) or "stoi" not in meta or "itos" not in meta:
        raise UploadError(f"{name}: not a nanoGPT meta.pkl (it needs 'stoi' and 'itos')")
    stoi, itos = meta["stoi"], meta["itos"]
    if not isinstance(stoi, dict) or not isinstance(itos, dict) or not stoi:
        raise UploadError(f"{name}: 'stoi' and 'itos' must be non-empty dicts")
    for ch, i in stoi.items():
        if not isinstance(ch, str) or len(ch) != 1 or type(i) is not int:
            raise UploadError(f"{name}: stoi must map single characters to ids, got {ch!r}: {i!r}")
        if itos.get(i) != ch:
            raise UploadError(f"{name}: stoi[{ch!r}] = {i} but itos[{i}] = {itos.get(i)!r}")
    if len(itos) != len(stoi) or sorted(stoi.values()) != list(range(len(stoi))):
        raise UploadError(f"{name}: stoi and itos must cover the ids 0..{len(stoi) - 1} once each")
    return meta


def char_tokenizer(stoi: dict[str, int]) -> Tokenizer:
    """A ``tokenizers`` character tokenizer: every character (spaces, newlines too) is a token.

    ``[UNK]`` gets id ``len(stoi)``: characters outside the vocabulary (emoji, ...)
    become ``[UNK]``, which ``models.tokenizer.encode`` reports as unknown.
    Decoding fuses the characters back together without spaces.
    """
    vocab = {**stoi, UNK: len(stoi)}
    tokenizer = Tokenizer(tk_models.WordLevel(vocab, unk_token=UNK))
    tokenizer.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    tokenizer.decoder = decoders.Fuse()
    return tokenizer


def _nanogpt_state(state: dict, n_embd: int, name: str) -> dict[str, torch.Tensor]:
    """nanoGPT parameter names -> ours; ``c_attn`` (3C, C) split into q/k/v (C, C)."""
    out = {}
    for key, tensor in state.items():
        key = key.removeprefix("_orig_mod.")  # added by torch.compile
        if MASK_BUFFER.fullmatch(key):
            continue
        if not isinstance(tensor, torch.Tensor):
            raise UploadError(f"{name}: '{key}' is not a tensor")
        ours = re.sub(r"^h\.(\d+)\.", r"blocks.\1.", key.removeprefix("transformer."))
        ours = ours.replace(".attn.c_proj.", ".attn.o_proj.")
        if ".attn.c_attn." in ours:
            if tensor.dim() == 0 or tensor.shape[0] != 3 * n_embd:
                raise UploadError(
                    f"{name}: weight {key} has shape {tuple(tensor.shape)}, "
                    f"model_args need {3 * n_embd} rows (q, k, v stacked)"
                )
            for part, chunk in zip("qkv", tensor.split(n_embd, dim=0), strict=True):
                out[ours.replace("c_attn", f"{part}_proj")] = chunk  # (C, C) or (C,)
        else:
            out[ours] = tensor
    return out


def _nanogpt_names(message: str) -> str:
    """Rewrite our parameter names in ``message`` to nanoGPT's, listing each once."""
    for pattern, repl in OURS_TO_NANOGPT:
        message = re.sub(pattern, repl, message)
    head, sep, names = message.partition("weights: ")
    return head + sep + ", ".join(dict.fromkeys(names.split(", "))) if sep else message


def _grow_vocab(model: Transformer) -> Transformer:
    """The same model with one extra token id whose embedding (and unembedding) is zero."""
    cfg = ModelConfig.from_dict({**model.cfg.to_dict(), "vocab_size": model.cfg.vocab_size + 1})
    state = dict(model.state_dict())
    for key in ("wte.weight", "lm_head.weight"):
        state[key] = torch.cat([state[key], state[key].new_zeros(1, cfg.d_model)])  # (V+1, C)
    return build_model(cfg, state, "grown vocabulary")


def convert_nanogpt(
    ckpt: bytes, meta: bytes | None, name: str = "ckpt.pt"
) -> tuple[Transformer, Tokenizer]:
    """Convert a nanoGPT character-level checkpoint to our ``Transformer`` and tokenizer.

    The config is softmax attention, learned positions, d_mlp = 4 * n_embd,
    biases from ``model_args["bias"]``, and tied weights when ``lm_head.weight``
    equals ``transformer.wte.weight``. Unknown characters map to ``[UNK]`` =
    ``len(stoi)``; when that id is not below ``vocab_size`` (nanoGPT's char models
    have exactly ``len(stoi)`` ids) the model grows one token whose embedding and
    unembedding rows are zero, so its logit is always 0 and no other logit changes.

    Raises:
        UploadError / ValueError: for a missing meta.pkl, a refused or damaged file,
            bad ``model_args``, or weights that are missing, misshapen or not finite
            (the message names the nanoGPT key).
    """
    if meta is None:
        raise UploadError(
            f"{name}: please upload its meta.pkl too: nanoGPT models without one use the "
            "GPT-2 vocabulary, which this server cannot download"
        )
    vocab = load_meta_pkl(meta)
    obj = safe_torch_load(name, ckpt)
    args, state = obj["model_args"], obj["model"]
    if not isinstance(args, dict) or not isinstance(state, dict):
        raise UploadError(f"{name}: 'model_args' and 'model' must be dicts")
    for key in ("n_layer", "n_head", "n_embd", "block_size", "vocab_size"):
        if type(args.get(key)) is not int or args[key] <= 0:
            raise UploadError(f"{name}: model_args['{key}'] must be a positive integer")
    state = _nanogpt_state(state, args["n_embd"], name)
    tied = "lm_head.weight" not in state or (
        state["lm_head.weight"].shape == state.get("wte.weight", torch.empty(0)).shape
        and torch.equal(state["lm_head.weight"], state["wte.weight"])
    )
    try:
        cfg = ModelConfig(
            vocab_size=args["vocab_size"],
            n_layer=args["n_layer"],
            n_head=args["n_head"],
            d_model=args["n_embd"],
            context_length=args["block_size"],
            attention="softmax",
            pos_enc="learned",
            d_mlp=4 * args["n_embd"],
            bias=bool(args.get("bias", True)),
            ln_bias=bool(args.get("bias", True)),
            tie_weights=tied,
        )
    except ValueError as exc:
        raise UploadError(f"{name}: bad model_args: {exc}".replace("d_model", "n_embd")) from None
    check_config_size(name, cfg)
    if len(vocab["stoi"]) > cfg.vocab_size:
        raise UploadError(
            f"meta.pkl has {len(vocab['stoi'])} characters but {name} has only "
            f"{cfg.vocab_size} token ids: they do not belong together"
        )
    try:
        model = build_model(cfg, state, name)
    except ValueError as exc:
        raise UploadError(_nanogpt_names(str(exc))) from None
    if len(vocab["stoi"]) >= cfg.vocab_size:  # no free id for [UNK]
        model = _grow_vocab(model)
    return model, char_tokenizer(vocab["stoi"])


def _safe_filename(name: str, suffix: str) -> str:
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", PurePath(name).stem)[:80] or "upload"
    return stem.lstrip(".") + suffix


def load_our_checkpoint(
    data: bytes, name: str = "model.safetensors"
) -> tuple[Transformer, Tokenizer]:
    """This project's ``.safetensors`` checkpoint from bytes, via ``load_checkpoint``.

    The header is checked first (JSON only) to refuse truncated files and configs
    too large to build; the bytes are then loaded from a temporary file.

    Raises:
        UploadError / ValueError: wrong format, truncated, missing metadata, or
            weights that do not fit the config (missing, misshapen, NaN/inf).
    """
    metadata = safetensors_metadata(name, data)
    if "config" not in metadata:
        raise UploadError(f"{name}: safetensors metadata has no 'config' entry")
    check_config_size(name, ModelConfig.from_json(metadata["config"]))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / _safe_filename(name, ".safetensors")
        path.write_bytes(data)
        model, tokenizer, _meta = load_checkpoint(path)
    return model, tokenizer


def _card(cfg: ModelConfig, parameters: int, source: str) -> dict:
    return {
        "layers": cfg.n_layer,
        "heads": cfg.n_head,
        "d_model": cfg.d_model,
        "d_head": cfg.d_head,
        "attention kind": cfg.attention,
        "positional scheme": cfg.pos_enc,
        "parameters": parameters,
        "source format": source,
    }


def _export_and_open(model: Transformer, tokenizer: Tokenizer, title: str, source: str, report):
    """Export to a temporary folder, read the graphs back as bytes, open sessions.

    The returned model also carries the PyTorch-named float32 ``weights``.
    """
    report(0.4, "exporting to ONNX (this takes a few seconds)…")
    with tempfile.TemporaryDirectory() as tmp:
        paths = export_model(model, Path(tmp), tokenizer, prefix="upload")
        graphs = {p.name.split(".")[1]: p.read_bytes() for p in paths}
    report(0.9, "opening the graphs…")
    card = _card(model.cfg, model.num_parameters(), source)
    result = load_graphs(graphs["inspect"], graphs["fast"], graphs.get("step"), title, card)
    result.weights = {k: v.detach().float().numpy() for k, v in model.state_dict().items()}
    return result


def _meta(model: onnx.ModelProto) -> dict[str, str]:
    return {p.key: p.value for p in model.metadata_props}


def _open_onnx(files: dict[str, bytes], report) -> OnnxModel:
    """Validate one to three contract graphs (inspect, fast, step) and open them."""
    roles: dict[str, tuple[str, onnx.ModelProto, bytes]] = {}
    for i, (name, data) in enumerate(files.items()):
        report(0.1 + 0.6 * i / len(files), f"checking {name}…")
        model = validate_onnx(data, name)
        role = graph_role(model)
        if role in roles:
            raise UploadError(f"{name} and {roles[role][0]} are both {role} graphs")
        roles[role] = (name, model, data)
    configs = {_meta(m)["config"] for _, m, _ in roles.values()}
    if len(configs) > 1:
        raise UploadError("these graphs have different configs: upload graphs of one model")
    if "inspect" not in roles:
        raise UploadError("an inspect graph is needed (input_ids -> logits, attn, q, k, v, ...)")
    name, model, data = roles["inspect"]
    report(0.8, "opening the graphs…")
    params = sum(math.prod(t.dims) for t in model.graph.initializer)
    cfg = ModelConfig.from_json(_meta(model)["config"])
    fast, step = (roles[r][2] if r in roles else None for r in ("fast", "step"))
    return load_graphs(data, fast, step, f"upload: {name}", _card(cfg, params, "ONNX"))


def load_upload(files: dict[str, bytes], progress=None) -> OnnxModel:
    """The app's single entry: uploaded files (name -> bytes) -> a runnable ``OnnxModel``.

    Accepts one ``.safetensors`` (ours), a nanoGPT ``.pt`` with its ``meta.pkl``,
    or one to three ``.onnx`` graphs. ``progress(fraction, message)`` is called at
    each stage. The model's ``name`` is "upload: <file>", its ``card`` lists
    layers, heads, widths, attention kind, positions, parameters and source format.

    Raises:
        UploadError / ValueError: naming the file and the problem.
    """
    report = progress or (lambda fraction, message: None)
    report(0.0, "checking files…")
    if not files:
        raise UploadError("no files were uploaded")
    if len(files) > MAX_FILES:
        raise UploadError(f"too many files ({len(files)}); upload at most {MAX_FILES}")
    by_format: dict[str, dict[str, bytes]] = {}
    for name, data in files.items():
        check_size(name, data)
        by_format.setdefault(expect_format(name, data), {})[name] = data
    kinds = set(by_format)
    if kinds == {"onnx"}:
        result = _open_onnx(by_format["onnx"], report)
        report(1.0, "ready")
        return result
    if kinds == {"safetensors"} and len(files) == 1:
        (name, data), source = next(iter(files.items())), "safetensors checkpoint"
        report(0.1, f"reading {name}…")
        model, tokenizer = load_our_checkpoint(data, name)
    elif kinds <= {"torch-zip", "pickle"} and len(by_format.get("torch-zip", {})) == 1:
        (name, ckpt), source = next(iter(by_format["torch-zip"].items())), "nanoGPT checkpoint"
        metas = list(by_format.get("pickle", {}).values())
        if len(metas) > 1:
            raise UploadError("upload only one meta.pkl")
        report(0.1, f"converting {name}…")
        model, tokenizer = convert_nanogpt(ckpt, metas[0] if metas else None, name)
    elif kinds == {"pickle"}:
        raise UploadError("meta.pkl is only the vocabulary: upload it together with ckpt.pt")
    else:
        raise UploadError(
            "upload one model at a time: a .safetensors file, a ckpt.pt with its meta.pkl, "
            "or .onnx graphs"
        )
    result = _export_and_open(model, tokenizer, f"upload: {name}", source, report)
    report(1.0, "ready")
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Convert a checkpoint to ours + ONNX graphs.")
    parser.add_argument("checkpoint", type=Path, help="nanoGPT ckpt.pt or our .safetensors")
    parser.add_argument("--meta", type=Path, default=None, help="nanoGPT meta.pkl")
    parser.add_argument("--out", type=Path, required=True, help="output folder")
    args = parser.parse_args(argv)
    data = args.checkpoint.read_bytes()
    try:
        if expect_format(args.checkpoint.name, data) == "safetensors":
            model, tokenizer = load_our_checkpoint(data, args.checkpoint.name)
        else:
            meta = args.meta.read_bytes() if args.meta else None
            model, tokenizer = convert_nanogpt(data, meta, args.checkpoint.name)
    except ValueError as exc:
        parser.error(str(exc))
    stem = _safe_filename(args.checkpoint.name, "")
    path = args.out / f"{stem}.safetensors"
    save_checkpoint(path, model, tokenizer, {"converted_from": args.checkpoint.name})
    print(f"wrote {path} ({model.num_parameters():,} parameters)")
    for path in export_model(model, args.out, tokenizer, prefix=stem):
        print(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
