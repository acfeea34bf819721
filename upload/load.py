"""The app's single entry for uploads: files in, a runnable model out (server side).

Only names and sizes are looked at here. Every byte of a file goes to a worker
(``upload/worker.py``), which answers with plain data:

* a checkpoint (ours, nanoGPT) comes back as float32 weights, a config and a tokenizer
  spec; the server checks the config against explicit limits, each array's name and
  shape against that config, rebuilds the tokenizer with our code, and exports the
  model with our own exporter (``models/export.py``), exactly like the shipped models.
  The exported graphs are ours, so they run in the server;
* ONNX graphs stay in their worker for good (:class:`upload.isolated.IsolatedModel`).
"""

from __future__ import annotations

import re
import threading
from pathlib import PurePath

from models.config import ModelConfig
from models.runtime import OnnxModel, load_graphs
from upload.client import Worker
from upload.errors import UploadError
from upload.isolated import IsolatedModel
from upload.limits import CONVERT_TIMEOUT_S, MAX_FILES
from upload.sizes import check_config_size, check_size
from upload.tempdirs import workdir
from upload.tokenizer_spec import build, check_spec

EXTENSIONS = (".safetensors", ".pt", ".pth", ".ckpt", ".pkl", ".onnx")
# torch.onnx.export (dynamo) keeps global tracing state: one export at a time per server.
_EXPORT_LOCK = threading.Lock()


def card(cfg: ModelConfig, parameters: int, source: str) -> dict:
    """The model card of an upload: layers, heads, widths, kinds, parameters, source."""
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


def check_files(files: dict[str, bytes]) -> None:
    """What the server checks itself: a count, sizes and extensions (no content is read).

    Raises:
        UploadError: no files, too many, empty or too large, or an unsupported extension.
    """
    if not files:
        raise UploadError("no files were uploaded")
    if len(files) > MAX_FILES:
        raise UploadError(f"too many files ({len(files)}); upload at most {MAX_FILES}")
    for name, data in files.items():
        check_size(name, data)
        if PurePath(name).suffix.lower() not in EXTENSIONS:
            raise UploadError(
                f"{name}: unsupported file type; upload a .safetensors file, "
                "a nanoGPT ckpt.pt with its meta.pkl, or .onnx graphs"
            )


def checked_config(reply: dict, what: str) -> tuple[ModelConfig, object]:
    """The reply's config and tokenizer, checked again on the server side.

    Raises:
        UploadError: a config that does not build or is too large, a bad tokenizer spec.
    """
    try:
        cfg = ModelConfig.from_dict(reply.get("config"))
    except (ValueError, TypeError) as exc:
        raise UploadError(f"{what}: bad config: {exc}") from None
    check_config_size(what, cfg)
    return cfg, build(check_spec(reply.get("tokenizer"), cfg.vocab_size, what))


def _weight_shapes(cfg: ModelConfig) -> dict[str, tuple[int, ...]]:
    """Our parameter name -> shape for ``cfg``, without allocating (torch's meta device)."""
    import torch

    from models.transformer import Transformer

    with torch.device("meta"):
        state = Transformer(cfg).state_dict()
    if cfg.tie_weights:
        state.pop("lm_head.weight")
    return {k: tuple(v.shape) for k, v in state.items()}


def convert(files: dict[str, bytes], what: str, report) -> tuple[ModelConfig, object, dict]:
    """Checkpoint files through a one-shot worker: (config, tokenizer, weights), each
    checked on this side (``checked_config``, every weight's name and shape).

    Raises:
        UploadError: the worker's refusal, or WorkerError.
    """
    worker = Worker(what)
    checked: dict = {}

    def expect(reply: dict):
        checked["cfg"], checked["tokenizer"] = checked_config(reply, what)
        return _weight_shapes(checked["cfg"]).get

    try:
        report(0.1, f"reading {what} in an isolated worker…")
        _, weights = worker.request(
            {"op": "convert"}, CONVERT_TIMEOUT_S, blobs=files, expect=expect
        )
    finally:
        worker.stop()
    return checked["cfg"], checked["tokenizer"], weights


def _export_and_open(name: str, cfg, tokenizer, weights, report) -> OnnxModel:
    """Our exporter on checked weights, in a temp folder of its own; sessions from bytes."""
    import numpy as np
    import torch

    from models.checkpoint import build_model
    from models.export import export_model

    state = {k: torch.from_numpy(v) for k, v in weights.items()}
    model = build_model(cfg, state, name)
    report(0.4, "exporting to ONNX (this takes a few seconds)…")
    with workdir() as folder, _EXPORT_LOCK:
        paths = export_model(model, folder, tokenizer, prefix="upload")
        graphs = {p.name.split(".")[1]: p.read_bytes() for p in paths}
    report(0.9, "opening the graphs…")
    source = "safetensors checkpoint" if name.endswith(".safetensors") else "nanoGPT checkpoint"
    info = card(cfg, model.num_parameters(), source)
    result = load_graphs(graphs["inspect"], graphs["fast"], graphs.get("step"), name, info)
    result.name = f"upload: {name}"
    result.weights = {
        k: np.asarray(v.detach().float().numpy()) for k, v in model.state_dict().items()
    }
    return result


def _open_isolated(files: dict[str, bytes], what: str, report) -> IsolatedModel:
    worker = Worker(what)
    report(0.2, "checking and test-running the graphs in an isolated worker…")
    try:
        reply, _ = worker.request({"op": "open"}, CONVERT_TIMEOUT_S, blobs=files)
        cfg, tokenizer = checked_config(reply, what)
        outputs = reply.get("outputs")
        if not isinstance(outputs, list) or not isinstance(reply.get("name"), str):
            raise UploadError(f"{what}: the worker's answer is incomplete")
    except BaseException:
        worker.stop()
        raise
    info = card(cfg, int(reply.get("parameters", 0)), "ONNX")
    return IsolatedModel(worker, dict(files), reply, cfg, tokenizer, info)


def load_upload(files: dict[str, bytes], progress=None):
    """Uploaded files (name -> bytes) -> a runnable model (``OnnxModel`` or ``IsolatedModel``).

    Accepts one ``.safetensors`` (ours), a nanoGPT ``.pt`` with its ``meta.pkl``, or one
    to three ``.onnx`` graphs. ``progress(fraction, message)`` is called at each stage.
    The model's ``name`` is "upload: <file>"; its ``card`` lists layers, heads, widths,
    attention kind, positions, parameters and source format.

    Raises:
        UploadError: one line naming the file and the problem (WorkerError when the
            worker died or ran out of time or memory).
    """
    report = progress or (lambda fraction, message: None)
    report(0.0, "checking files…")
    check_files(files)
    what = " + ".join(files)
    if all(PurePath(n).suffix.lower() == ".onnx" for n in files):
        model = _open_isolated(files, what, report)
    else:
        cfg, tokenizer, weights = convert(files, what, report)
        model = _export_and_open(main_file(files), cfg, tokenizer, weights, report)
    report(1.0, "ready")
    return model


def main_file(files: dict[str, bytes]) -> str:
    """The name of the model file among ``files`` (not the meta.pkl)."""
    return next((n for n in files if not n.lower().endswith(".pkl")), next(iter(files)))


def safe_filename(name: str, suffix: str) -> str:
    """A file name made of ``[A-Za-z0-9_.-]`` from a user's ``name``, plus ``suffix``."""
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", PurePath(name).stem)[:80] or "upload"
    return stem.lstrip(".") + suffix
