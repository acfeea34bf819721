"""nanoGPT checkpoints (``ckpt.pt`` + character vocabulary ``meta.pkl``) -> our ``Transformer``.

nanoGPT's GPT is the same GPT-2 architecture as ``models/transformer.py`` with
learned positions: parameters are renamed (``transformer.h.0.attn.c_attn`` ->
``blocks.0.attn.{q,k,v}_proj``, ``c_attn`` split in three), ``_orig_mod.`` prefixes
from ``torch.compile`` are stripped and the causal-mask buffers dropped. The
pickles are opened only through ``upload/intake.py`` (no code runs), in the worker.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from models.config import ModelConfig
from upload.errors import UploadError
from upload.intake import plain_unpickle, safe_torch_load
from upload.sizes import check_config_size, check_size
from upload.tokenizer_spec import check_rows

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


def convert_nanogpt(
    ckpt: bytes, meta: bytes | None, name: str = "ckpt.pt"
) -> tuple[Transformer, dict]:
    """Convert a nanoGPT character-level checkpoint to our ``Transformer`` and the spec of
    its character tokenizer (``{"kind": "char", "stoi": ...}``, ``upload/tokenizer_spec.py``).

    The config is softmax attention, learned positions, d_mlp = 4 * n_embd,
    biases from ``model_args["bias"]``, and tied weights when ``lm_head.weight``
    equals ``transformer.wte.weight``. The vocabulary is the model's as it is: no
    ``[UNK]`` row is added (characters it lacks are left out of a text, and said so).

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
    obj = safe_torch_load(name, ckpt)  # imports torch (2 CPU-seconds): after the meta.pkl
    import torch

    from models.checkpoint import build_model

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
            position_scheme="learned",
            d_mlp=4 * args["n_embd"],
            bias=bool(args.get("bias", True)),
            ln_bias=bool(args.get("bias", True)),
            tie_weights=tied,
        )
    except ValueError as exc:
        raise UploadError(f"{name}: bad model_args: {exc}".replace("d_model", "n_embd")) from None
    check_config_size(name, cfg)
    n_chars = len(vocab["stoi"])
    check_rows(n_chars, n_chars - 1, cfg.vocab_size, f"{name} + meta.pkl")
    try:
        model = build_model(cfg, state, name)
    except ValueError as exc:
        raise UploadError(_nanogpt_names(str(exc))) from None
    return model, {"kind": "char", "stoi": dict(vocab["stoi"])}
