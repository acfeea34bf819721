"""The tiny test models' ONNX exports, built once per session and kind on first use.

A DeltaNet model exports through ``torch.export`` of a token scan (``models/delta_graph.py``):
about a minute per graph on the 2-core machine, three graphs. Its tiny export is therefore
also kept on disk between sessions, under ``.pytest_cache/attnviz-tiny-exports/<key>``, where
the key hashes everything the graphs depend on: the sources of ``models/`` and ``export/``,
the torch, onnx and onnxscript versions, the config and the tokenizer. The tests compare
every graph against the PyTorch model built here, so a graph from another model would fail
them rather than pass. Softmax and linear models export in seconds and are not kept.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable, Iterator, Mapping
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from tests.helpers import ROOT

CACHE = ROOT / ".pytest_cache" / "attnviz-tiny-exports"
CACHED_KINDS = ("delta",)  # kinds whose export is slow enough to keep between sessions


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


def cached_export(model, tokenizer, folder: Path) -> Path:
    """Export ``model`` into ``folder`` (``export.graphs.export_model``), copying the graphs
    from the on-disk cache when an export of the same sources, config and tokenizer is
    there, and filling the cache otherwise (atomically: a temporary folder, then a rename,
    so two test workers never read a half-written cache)."""
    from export.graphs import export_model

    entry = CACHE / source_key(model.cfg.to_json(), tokenizer.to_str())
    if not entry.is_dir():
        tmp = CACHE / f".{entry.name}.{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        export_model(model, tmp, tokenizer)
        try:
            tmp.rename(entry)
        except OSError:  # another worker finished first: its copy is the same export
            shutil.rmtree(tmp, ignore_errors=True)
    for path in entry.glob("*.onnx"):
        shutil.copy2(path, folder / path.name)
    return folder


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
