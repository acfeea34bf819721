"""One-file checkpoints: weights in safetensors, config and tokenizer in its metadata.

safetensors stores raw tensors and a JSON header, so loading one never runs
code. The metadata holds ``format``, ``config`` (JSON of ``ModelConfig``),
``tokenizer`` (the tokenizer's JSON) and ``training`` (JSON: data, steps, ...).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import save_file
from tokenizers import Tokenizer

from models.config import ModelConfig
from models.shapes import parameter_shapes
from models.tokenizer import check_token_ids, load_tokenizer
from models.transformer import Transformer

FORMAT = "attention-visualizer/1"
# The shipped models: what `python -m training.train` and `python -m export.graphs` write
# when no paths are given, wherever they are run from.
SHIPPED_DIR = Path(__file__).resolve().parents[1] / "exported"


def shipped_checkpoint(kind: str) -> Path:
    """``exported/<kind>.safetensors`` in this repository."""
    return SHIPPED_DIR / f"{kind}.safetensors"


def current_umask() -> int:
    """This process's file-creation mask (read by setting it and setting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def save_safetensors(state: dict, path: Path, metadata: dict[str, str]) -> None:
    """``safetensors.torch.save_file``, then the file's mode as any new file's
    (0o666 less the umask): safetensors creates it 0o600, which a teacher converting
    into a shared folder, or a server running as another user, cannot read."""
    save_file(state, str(path), metadata=metadata)
    os.chmod(path, 0o666 & ~current_umask())


def save_checkpoint(
    path: Path, model: Transformer, tokenizer: Tokenizer, training: dict | None = None
) -> None:
    """Write ``model`` (float32), its config, ``tokenizer`` and training info to ``path``."""
    state = {k: v.detach().contiguous().float() for k, v in model.state_dict().items()}
    if model.cfg.tie_weights:
        state.pop("lm_head.weight")  # the same tensor as wte.weight
    metadata = {
        "format": FORMAT,
        "config": model.cfg.to_json(),
        "tokenizer": tokenizer.to_str(),
        "training": json.dumps(training or {}, sort_keys=True),
    }
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    save_safetensors(state, Path(path), metadata)


def check_state(
    cfg: ModelConfig, state: dict[str, torch.Tensor], source: str
) -> dict[str, torch.Tensor]:
    """``state`` checked against ``Transformer(cfg)``: every name present and known, each
    shape exact, each tensor float and finite. The tensors are not copied, so a
    memory-mapped checkpoint costs the pages of its weights and nothing more at its peak
    (the shapes come from the model laid out on the meta device:
    :func:`models.shapes.parameter_shapes`).

    Returns:
        ``state`` without ``lm_head.weight`` when ``cfg.tie_weights`` (it is
        ``wte.weight``); the tensors themselves, not copies.

    Raises:
        ValueError: naming missing or unexpected keys, wrong shapes, or
            non-finite (NaN/inf) values.
    """
    expected = parameter_shapes(cfg)
    if cfg.tie_weights:
        expected.pop("lm_head.weight")
        state = {k: v for k, v in state.items() if k != "lm_head.weight"}
    missing = sorted(set(expected) - set(state))
    unexpected = sorted(set(state) - set(expected))
    if missing:
        raise ValueError(f"{source}: missing weights: {', '.join(missing[:8])}")
    if unexpected:
        raise ValueError(f"{source}: unexpected weights: {', '.join(unexpected[:8])}")
    for name, tensor in state.items():
        if tuple(tensor.shape) != expected[name]:
            raise ValueError(
                f"{source}: weight {name} has shape {tuple(tensor.shape)}, "
                f"the config needs {expected[name]}"
            )
        if not tensor.is_floating_point():
            raise ValueError(f"{source}: weight {name} is not a float tensor")
    for name, tensor in state.items():  # the values only once every shape is right
        if not all_finite(tensor):
            raise ValueError(f"{source}: weight {name} contains NaN or inf")
    return state


def all_finite(tensor: torch.Tensor, chunk: int = 1 << 20) -> bool:
    """Whether every value of a float tensor is finite, checked ``chunk`` values at a time
    (as float32 numpy arrays): the temporaries stay ~4 MB however large the tensor, and
    a memory-mapped tensor's pages are read once, without a copy of it."""
    flat = tensor.detach().reshape(-1)  # (N,): a view where the tensor is contiguous
    return all(np.isfinite(part.float().numpy()).all() for part in flat.split(chunk))


def build_model(cfg: ModelConfig, state: dict[str, torch.Tensor], source: str) -> Transformer:
    """Instantiate ``Transformer(cfg)`` and load ``state`` strictly, with checks
    (:func:`check_state`); the weights are copied in as float32.

    Raises:
        ValueError: naming missing or unexpected keys, wrong shapes, or
            non-finite (NaN/inf) values.
    """
    state = check_state(cfg, state, source)
    model = Transformer(cfg)
    model.load_state_dict({k: v.float() for k, v in state.items()}, strict=False)
    return model.eval()


def load_checkpoint(path: Path) -> tuple[Transformer, Tokenizer, dict]:
    """Load a checkpoint written by :func:`save_checkpoint`.

    Returns:
        ``(model, tokenizer, metadata)``; the model is in eval mode and
        ``metadata["training"]`` is decoded from JSON.

    Raises:
        ValueError: if the file is not a safetensors file, lacks this project's
            metadata, its tokenizer produces an id >= ``vocab_size``, or its weights
            do not fit its config (missing, misshapen, not float, NaN/inf).
    """
    path = Path(path)
    try:
        with safe_open(str(path), framework="pt") as f:
            metadata = dict(f.metadata() or {})
            state = {k: f.get_tensor(k) for k in f.keys()}
    except (SafetensorError, OSError, ValueError, RuntimeError) as exc:
        raise ValueError(f"{path.name}: not a readable safetensors file ({exc})") from exc
    for key in ("config", "tokenizer"):
        if key not in metadata:
            raise ValueError(f"{path.name}: safetensors metadata has no '{key}' entry")
    cfg = ModelConfig.from_json(metadata["config"])
    tokenizer = load_tokenizer(metadata["tokenizer"])
    check_token_ids(tokenizer, cfg.vocab_size, path.name)
    model = build_model(cfg, state, path.name)
    try:
        metadata["training"] = json.loads(metadata.get("training", "{}"))
    except json.JSONDecodeError:
        metadata["training"] = {}
    return model, tokenizer, metadata
