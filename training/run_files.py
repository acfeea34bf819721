"""The files around a training run: where its tokenizer goes beside the checkpoint, and
the weights and step of a ``--checkpoint-every`` file to resume from
(``training/train.py``)."""

from __future__ import annotations

from pathlib import Path

from tokenizers import Tokenizer

from models.checkpoint import load_checkpoint


def tokenizer_path(out: Path, tokenizer) -> Path:
    """Where the tokenizer goes beside checkpoint ``out``: ``tokenizer.json``, unless that
    file holds another vocabulary (an earlier run on other text into the same folder),
    which is kept; then ``<out's name>.tokenizer.json``, said in one line."""
    shared = out.parent / "tokenizer.json"
    if not shared.exists():
        return shared
    try:
        same = Tokenizer.from_file(str(shared)).to_str() == tokenizer.to_str()
    except Exception:  # noqa: BLE001 - tokenizers' own error: not a tokenizer, replace it
        return shared
    if same:
        return shared
    own = out.with_name(f"{out.name.removesuffix('.safetensors')}.tokenizer.json")
    print(f"{shared} holds another run's vocabulary; kept, this one goes to {own}")
    return own


def resume_point(path: Path | None) -> tuple[dict, int] | None:
    """The weights and step of a ``--checkpoint-every`` file ``NAME.stepN.safetensors``.

    Raises ValueError when the name carries no step.
    """
    if path is None:
        return None
    stem = path.name.removesuffix(".safetensors")
    step = stem.rsplit(".step", 1)[-1]
    if ".step" not in stem or not step.isascii() or not step.isdecimal():
        raise ValueError(f"{path}: not a NAME.stepN.safetensors checkpoint; pass one of those")
    return load_checkpoint(path)[0].state_dict(), int(step)
