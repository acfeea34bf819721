"""Turn uploaded files into a runnable, inspectable model, safely.

Three kinds of upload (format judged by content, checked against the extension):

* this project's ``.safetensors`` checkpoint: loaded by ``models/checkpoint.py``;
* a nanoGPT ``ckpt.pt`` plus its character vocabulary ``meta.pkl``: converted
  to our ``Transformer`` by ``models/nanogpt.py``;
* ``.onnx`` graphs that follow ``models/contract.py``: validated, never converted.

Checkpoints are exported to ONNX in a temporary folder of their own (one
``tempfile.mkdtemp`` per conversion, removed afterwards) and opened from bytes.
ONNX uploads are checked statically and then run once in a fenced-in child
process. Every failure is a ``ValueError`` (mostly :class:`UploadError`) with a
message a student can act on. The safety checks live in ``models/upload_safety.py``
(files, pickles, zips, sizes), ``models/onnx_safety.py`` and ``models/onnx_contract.py``.

CLI: ``python -m models.convert ckpt.pt --meta meta.pkl --out DIR`` writes
``DIR/<name>.safetensors`` and its ONNX graphs; ``python -m models.convert
model.inspect.onnx [model.fast.onnx ...]`` checks ONNX graphs exactly as the app's
uploader does and prints the model card, or the reason for refusing (exit code 2).
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path, PurePath

import onnx
from tokenizers import Tokenizer

from models.checkpoint import load_checkpoint, save_checkpoint
from models.config import ModelConfig
from models.export import export_model
from models.nanogpt import char_tokenizer, convert_nanogpt, load_meta_pkl
from models.onnx_contract import graph_role, run_trial
from models.onnx_safety import graph_config, stored_parameters, validate_onnx
from models.runtime import OnnxModel, load_graphs
from models.transformer import Transformer
from models.upload_safety import (
    MAX_FILES,
    MAX_UPLOAD_BYTES,
    UploadError,
    check_config_size,
    check_size,
    expect_format,
    safetensors_metadata,
    sniff_format,
)

# torch.onnx.export (dynamo) keeps global tracing state: one export at a time per server.
_EXPORT_LOCK = threading.Lock()

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


def _safe_filename(name: str, suffix: str) -> str:
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", PurePath(name).stem)[:80] or "upload"
    return stem.lstrip(".") + suffix


def load_our_checkpoint(
    data: bytes, name: str = "model.safetensors", workdir: Path | None = None
) -> tuple[Transformer, Tokenizer]:
    """This project's ``.safetensors`` checkpoint from bytes, via ``load_checkpoint``.

    The header is checked first (JSON only) to refuse truncated files and configs
    too large to build or run; the bytes are then loaded from a file in ``workdir``
    (default: a fresh temporary folder, removed afterwards).

    Raises:
        UploadError / ValueError: wrong format, truncated, missing metadata, a
            tokenizer id >= vocab_size, or weights that do not fit the config
            (missing, misshapen, NaN/inf).
    """
    metadata = safetensors_metadata(name, data)
    if "config" not in metadata:
        raise UploadError(f"{name}: safetensors metadata has no 'config' entry")
    check_config_size(name, ModelConfig.from_json(metadata["config"]))
    with _workdir(workdir) as folder:
        path = folder / _safe_filename(name, ".safetensors")
        path.write_bytes(data)
        model, tokenizer, _meta = load_checkpoint(path)
    return model, tokenizer


@contextmanager
def _workdir(folder: Path | None):
    """``folder`` itself, or a fresh ``mkdtemp`` folder removed on exit, so that
    concurrent uploads of equally named files never share a path."""
    if folder is not None:
        yield folder
        return
    path = Path(tempfile.mkdtemp(prefix="attnviz-upload-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


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


def _export_and_open(
    model: Transformer, tokenizer: Tokenizer, title: str, source: str, report, workdir: Path
) -> OnnxModel:
    """Export into ``workdir``, read the graphs back as bytes, open sessions.

    The returned model also carries the PyTorch-named float32 ``weights``.
    """
    report(0.4, "exporting to ONNX (this takes a few seconds)…")
    with _EXPORT_LOCK:
        paths = export_model(model, workdir / "onnx", tokenizer, prefix="upload")
    graphs = {p.name.split(".")[1]: p.read_bytes() for p in paths}
    report(0.9, "opening the graphs…")
    card = _card(model.cfg, model.num_parameters(), source)
    result = load_graphs(graphs["inspect"], graphs["fast"], graphs.get("step"), title, card)
    result.weights = {k: v.detach().float().numpy() for k, v in model.state_dict().items()}
    return result


def _open_onnx(files: dict[str, bytes], report) -> OnnxModel:
    """Validate one to three contract graphs (inspect, fast, step), test-run them in a
    fenced-in child process, and open them."""
    roles: dict[str, tuple[str, onnx.ModelProto, bytes]] = {}
    for i, (name, data) in enumerate(files.items()):
        report(0.05 + 0.4 * i / len(files), f"checking {name}…")
        model = validate_onnx(data, name)
        role = graph_role(model)
        if role in roles:
            raise UploadError(f"{name} and {roles[role][0]} are both {role} graphs")
        roles[role] = (name, model, data)
    if len({graph_config(m) for _, m, _ in roles.values()}) > 1:
        raise UploadError("these graphs have different configs: upload graphs of one model")
    if "inspect" not in roles:
        raise UploadError("an inspect graph is needed (input_ids -> logits, attn, q, k, v, ...)")
    name, model, data = roles["inspect"]
    cfg = graph_config(model)
    report(0.5, "test-running the graphs in a sandbox (a few seconds)…")
    run_trial({role: (n, d) for role, (n, _, d) in roles.items()}, cfg)
    report(0.8, "opening the graphs…")
    params = stored_parameters(model)
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
    with _workdir(None) as workdir:
        if kinds == {"safetensors"} and len(files) == 1:
            (name, data), source = next(iter(files.items())), "safetensors checkpoint"
            report(0.1, f"reading {name}…")
            model, tokenizer = load_our_checkpoint(data, name, workdir)
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
        result = _export_and_open(model, tokenizer, f"upload: {name}", source, report, workdir)
    report(1.0, "ready")
    return result


def _print_card(model: OnnxModel) -> None:
    for key, value in model.card.items():
        print(f"{key}: {value:,}" if isinstance(value, int) else f"{key}: {value}")


def main(argv: list[str] | None = None) -> None:
    """CLI. A checkpoint (nanoGPT ``ckpt.pt`` + ``--meta``, or ours) with ``--out DIR``:
    write ``DIR/<name>.safetensors`` and its ONNX graphs. One to three ``.onnx`` files:
    check them as the app's uploader does and print the model card.

    Exits with code 2 (after printing the reason to stderr) when a file is refused.
    """
    parser = argparse.ArgumentParser(
        description="Convert a checkpoint to ours + ONNX graphs, or check ONNX graphs."
    )
    parser.add_argument(
        "files", nargs="+", type=Path, help="nanoGPT ckpt.pt, our .safetensors, or .onnx graphs"
    )
    parser.add_argument("--meta", type=Path, default=None, help="nanoGPT meta.pkl")
    parser.add_argument("--out", type=Path, default=None, help="output folder (checkpoints)")
    args = parser.parse_args(argv)
    if all(f.suffix.lower() == ".onnx" for f in args.files):
        try:
            model = load_upload({f.name: f.read_bytes() for f in args.files})
        except ValueError as exc:
            print(f"refused: {exc}", file=sys.stderr)
            sys.exit(2)
        print(f"accepted: {model.name.removeprefix('upload: ')}")
        _print_card(model)
        return
    if len(args.files) != 1 or args.out is None:
        parser.error("convert one checkpoint at a time, with --out DIR")
    checkpoint = args.files[0]
    data = checkpoint.read_bytes()
    try:
        if expect_format(checkpoint.name, data) == "safetensors":
            model, tokenizer = load_our_checkpoint(data, checkpoint.name)
        else:
            meta = args.meta.read_bytes() if args.meta else None
            model, tokenizer = convert_nanogpt(data, meta, checkpoint.name)
    except ValueError as exc:
        parser.error(str(exc))
    stem = _safe_filename(checkpoint.name, "")
    path = args.out / f"{stem}.safetensors"
    save_checkpoint(path, model, tokenizer, {"converted_from": checkpoint.name})
    print(f"wrote {path} ({model.num_parameters():,} parameters)")
    for path in export_model(model, args.out, tokenizer, prefix=stem):
        print(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
