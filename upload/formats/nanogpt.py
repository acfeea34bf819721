"""nanoGPT checkpoints (``ckpt.pt`` + its vocabulary) -> our ``Transformer``.

nanoGPT's GPT is the same GPT-2 architecture as ``models/transformer.py`` with
learned positions: parameters are renamed (``transformer.h.0.attn.c_attn`` ->
``blocks.0.attn.{q,k,v}_proj``, ``c_attn`` split in three), ``_orig_mod.`` prefixes
from ``torch.compile`` are stripped and the causal-mask buffers dropped. The vocabulary
is a character ``meta.pkl`` (nanoGPT's ``data/shakespeare_char/prepare.py``) or, for
GPT-2's 50,257 tokens (``init_from='gpt2'``, OpenWebText), GPT-2's published
``tokenizer.json``, which the user supplies: nothing is downloaded. The pickles are
opened only through ``upload/intake.py`` (no code runs), in the worker.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import TYPE_CHECKING

from models.config import ModelConfig
from upload.errors import UploadError
from upload.limits import BROWSER, Limits
from upload.pickles import plain_unpickle, safe_torch_load
from upload.sizes import check_config_size, check_size
from upload.spec_checks import check_spec
from upload.tokenizer_spec import spec_from_json
from upload.training_info import plain_training

if TYPE_CHECKING:
    import torch

    from models.transformer import Transformer

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


def _nanogpt_state(state: dict, n_embd: int, name: str) -> dict[str, torch.Tensor]:
    """nanoGPT parameter names -> ours; ``c_attn`` (3C, C) split into q/k/v (C, C)."""
    import torch

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


def _vocabulary(
    meta: bytes | None, tokenizer: bytes | None, names: tuple[str, str]
) -> tuple[dict | None, str]:
    """The tokenizer spec of a meta.pkl or a tokenizer.json (at most one), and the file's
    name; (None, "") without either. Read before torch is imported (2 CPU-seconds)."""
    if meta is not None and tokenizer is not None:
        raise UploadError(
            f"upload one vocabulary with a nanoGPT checkpoint: {names[0]} or {names[1]}, not both"
        )
    if meta is not None:
        return {"kind": "char", "stoi": dict(load_meta_pkl(meta, names[0])["stoi"])}, names[0]
    if tokenizer is None:
        return None, ""
    check_size(names[1], tokenizer)
    try:
        text = tokenizer.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UploadError(f"{names[1]}: not a tokenizer.json (not UTF-8 text)") from None
    return spec_from_json(text, names[1]), names[1]


def missing_vocabulary(name: str, rows: int) -> str:
    """The refusal of a checkpoint uploaded without its vocabulary (``rows`` token rows)."""
    return (
        f"{name}: a nanoGPT checkpoint needs its vocabulary ({rows:,} token rows here): "
        "upload meta.pkl (character models) or GPT-2's tokenizer.json (models with GPT-2's "
        "50,257-token vocabulary); nothing is downloaded"
    )


def training_record(obj: dict, name: str) -> dict:
    """What nanoGPT's ``train.py`` saved beside the weights, as plain data for the model
    card: ``iter_num``, ``best_val_loss`` (a 0-d tensor there) and its ``config`` (the
    training settings: dataset, batch size, ...), each kept only when plain and finite."""
    record: dict = {"source": "nanoGPT", "converted_from": name}
    if type(obj.get("iter_num")) is int:
        record["iter_num"] = obj["iter_num"]
    loss = obj.get("best_val_loss")
    if hasattr(loss, "numel") and loss.numel() == 1 and loss.is_floating_point():
        loss = float(loss.item())  # (): one value, read from its page of the file
    if type(loss) in (int, float) and math.isfinite(loss):
        record["best_val_loss"] = round(float(loss), 6)
    if isinstance(obj.get("config"), dict):
        record["nanogpt_config"] = obj["config"]
    return plain_training(record)


def _config(args: object, state: dict, name: str, limits: Limits) -> ModelConfig:
    """Our config from nanoGPT's ``model_args``; tied when ``lm_head`` equals ``wte``.

    Raises:
        UploadError: a ``model_args`` field that is not a positive integer, or a config
            larger than ``limits``.
    """
    import torch

    if not isinstance(args, dict):
        raise UploadError(f"{name}: 'model_args' and 'model' must be dicts")
    for key in ("n_layer", "n_head", "n_embd", "block_size", "vocab_size"):
        if type(args.get(key)) is not int or args[key] <= 0:
            raise UploadError(f"{name}: model_args['{key}'] must be a positive integer")
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
            position_scheme="learned",
            d_mlp=4 * args["n_embd"],
            bias=bool(args.get("bias", True)),
            ln_bias=bool(args.get("bias", True)),
            tie_weights=tied,
        )
    except ValueError as exc:
        raise UploadError(f"{name}: bad model_args: {exc}".replace("d_model", "n_embd")) from None
    check_config_size(name, cfg, limits)
    return cfg


def read_nanogpt(
    ckpt: bytes | Path,
    meta: bytes | None = None,
    name: str = "ckpt.pt",
    *,
    tokenizer: bytes | None = None,
    vocab_names: tuple[str, str] = ("meta.pkl", "tokenizer.json"),
    limits: Limits = BROWSER,
) -> tuple[ModelConfig, dict[str, torch.Tensor], dict, dict]:
    """A nanoGPT checkpoint as our config, its checked weights by our parameter names
    (``models.checkpoint.check_state``: the tensors as read, not copies; tied
    ``lm_head.weight`` left out), the spec of its tokenizer (``upload/tokenizer_spec.py``)
    and its training record (:func:`training_record`).

    ``ckpt`` is the file's bytes (an upload) or a local path (the command line: it is
    memory-mapped, so the optimizer state nanoGPT saves beside the weights is never
    read). The vocabulary is ``meta`` (a character ``meta.pkl``: ``{"kind": "char"}``)
    or ``tokenizer`` (GPT-2's ``tokenizer.json``: ``{"kind": "bpe"}``), named in
    messages by ``vocab_names``; the model's token rows must match it or be its padding
    to a multiple of 64 (50,304 rows for 50,257 tokens). No ``[UNK]`` row is added.
    The config is softmax attention, learned positions, d_mlp = 4 * n_embd, biases
    from ``model_args["bias"]``, and tied weights when ``lm_head.weight`` equals
    ``transformer.wte.weight``; sizes within ``limits`` (the browser's by default).

    Raises:
        UploadError: no vocabulary or two (naming both files), a refused or damaged
            file, bad ``model_args``, token rows that do not match the vocabulary (both
            numbers), or weights that are missing, misshapen or not finite (the message
            names the nanoGPT key).
    """
    spec, vocab_name = _vocabulary(meta, tokenizer, vocab_names)
    obj = safe_torch_load(name, ckpt, limits)  # imports torch: after the vocabulary
    from models.checkpoint import check_state

    args, state = obj["model_args"], obj["model"]
    if not isinstance(args, dict) or not isinstance(state, dict):
        raise UploadError(f"{name}: 'model_args' and 'model' must be dicts")
    if type(args.get("n_embd")) is not int or args["n_embd"] <= 0:
        raise UploadError(f"{name}: model_args['n_embd'] must be a positive integer")
    state = _nanogpt_state(state, args["n_embd"], name)
    cfg = _config(args, state, name, limits)
    if spec is None:
        raise UploadError(missing_vocabulary(name, cfg.vocab_size))
    check_spec(spec, cfg.vocab_size, f"{name} + {vocab_name}")
    try:
        state = check_state(cfg, state, name)
    except ValueError as exc:
        raise UploadError(_nanogpt_names(str(exc))) from None
    return cfg, state, spec, training_record(obj, name)


def convert_nanogpt(
    ckpt: bytes | Path, meta: bytes | None = None, name: str = "ckpt.pt", **kwargs
) -> tuple[Transformer, dict, dict]:
    """:func:`read_nanogpt` (same arguments), its weights loaded into our ``Transformer``:
    (model, tokenizer spec, training record).

    Raises:
        UploadError: as :func:`read_nanogpt`.
    """
    from models.transformer import Transformer

    cfg, state, spec, training = read_nanogpt(ckpt, meta, name, **kwargs)
    model = Transformer(cfg)
    model.load_state_dict({k: v.float() for k, v in state.items()}, strict=False)
    return model.eval(), spec, training
