"""Fixtures of the bench tests."""

from __future__ import annotations

import shutil

import pytest

from bench.common import EVERY_KIND
from models.checkpoint import save_checkpoint


@pytest.fixture(scope="session")
def tiny_folder(tmp_path_factory, tiny_exports, tiny_tokenizer):
    """The shipped kinds' tiny models' graphs plus checkpoints in one folder, laid out like
    exported/."""
    folder = tmp_path_factory.mktemp("shipped")
    for kind in EVERY_KIND:
        model, src = tiny_exports[kind]
        for path in src.glob("*.onnx"):
            shutil.copy(path, folder / path.name)
        save_checkpoint(folder / f"{kind}.safetensors", model, tiny_tokenizer)
    return folder
