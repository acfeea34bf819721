"""The tiny test models' ONNX exports, built once per session and kind on first use.

Every kind's tiny export is also kept on disk between sessions, under
``.pytest_cache/attnviz-tiny-exports/<key>``, where the key hashes everything the graphs
depend on: the sources of ``models/`` and ``export/``, the torch, onnx and onnxscript
versions, the config and the tokenizer. The tests compare every graph against the PyTorch
model built here, so a graph from another model would fail them rather than pass.

A DeltaNet model exports through ``torch.export`` of a token scan (``models/delta_graph.py``):
25 s for its three graphs on the 2-core machine (softmax 3.5 s, linear 4.5 s, each with
its imports; measured 2026-11-29), while a test worker needing the same export waited.
``python -m tests.helpers.export_cache softmax linear`` fills the cache beforehand: ``make
test-fast`` runs it in the background while lint runs, ``make test`` with ``delta`` too
(lint leaves a core idle; every ``make test`` needs the three), a file lock per entry: a
test that asks meanwhile waits for it instead of exporting the same model again.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from collections.abc import Callable, Iterator, Mapping
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from tests.helpers import ROOT

CACHE = ROOT / ".pytest_cache" / "attnviz-tiny-exports"


def source_key(*parts: str) -> str:
    """sha256 (first 16 hex digits) of ``models/`` and ``export/`` sources, the exporter's
    package versions and ``parts`` (the config and tokenizer JSON)."""
    digest = hashlib.sha256()
    for folder in ("models", "export"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            digest.update(path.relative_to(ROOT).as_posix().encode())
            digest.update(path.read_bytes())
    for package in ("torch", "onnx", "onnxscript"):
        try:
            digest.update(f"{package}={version(package)}".encode())
        except PackageNotFoundError:
            digest.update(f"{package}=none".encode())
    for part in parts:
        digest.update(part.encode())
    return digest.hexdigest()[:16]


def tiny_tokenizer():
    """The tests' tiny word-level tokenizer (two sentences' words)."""
    from models.tokenizer import build_tokenizer

    return build_tokenizer(["the cat sat on the mat .", "the dogs are in the park ."])


def tiny_model(kind: str, tokenizer):
    """A random tiny model of attention ``kind`` (seed 0: every process builds the same
    one): 2 layers, 2 heads, d_model 32, context 16."""
    import torch

    from models.config import ModelConfig
    from models.transformer import Transformer

    torch.manual_seed(0)
    cfg = ModelConfig(
        vocab_size=tokenizer.get_vocab_size(),
        n_layer=2,
        n_head=2,
        d_model=32,
        d_mlp=64,
        context_length=16,
        attention=kind,
    )
    return Transformer(cfg).eval()


def cached_export(model, tokenizer, folder: Path) -> Path:
    """Export ``model`` into ``folder`` (``export.graphs.export_model``), copying the graphs
    from the on-disk cache when an export of the same sources, config and tokenizer is
    there, and filling the cache otherwise (under a file lock, into a temporary folder
    renamed when complete: two processes never export one entry twice nor read a
    half-written one)."""
    for path in _entry(model, tokenizer).glob("*.onnx"):
        shutil.copy2(path, folder / path.name)
    return folder


def _entry(model, tokenizer) -> Path:
    from filelock import FileLock

    from export.graphs import export_model

    entry = CACHE / source_key(model.cfg.to_json(), tokenizer.to_str())
    CACHE.mkdir(parents=True, exist_ok=True)
    with FileLock(str(entry) + ".lock"):
        if not entry.is_dir():
            tmp = CACHE / f".{entry.name}.{os.getpid()}"
            shutil.rmtree(tmp, ignore_errors=True)
            export_model(model, tmp, tokenizer)
            tmp.rename(entry)
    return entry


def main(kinds: list[str]) -> None:
    """Fill the cache with the tiny exports of ``kinds`` (one thread: it runs beside lint)."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch

    torch.set_num_threads(1)
    tokenizer = tiny_tokenizer()
    for kind in kinds:
        _entry(tiny_model(kind, tokenizer), tokenizer)


class LazyExports(Mapping):
    """kind -> ``build(kind)``, built on first access and then kept: a test that needs one
    kind does not pay for the others' exports."""

    def __init__(self, kinds: tuple[str, ...], build: Callable[[str], tuple]):
        self._kinds, self._build, self._built = kinds, build, {}

    def __getitem__(self, kind: str) -> tuple:
        if kind not in self._kinds:
            raise KeyError(kind)
        if kind not in self._built:
            self._built[kind] = self._build(kind)
        return self._built[kind]

    def __iter__(self) -> Iterator[str]:
        return iter(self._kinds)

    def __len__(self) -> int:
        return len(self._kinds)


if __name__ == "__main__":
    main(sys.argv[1:])
