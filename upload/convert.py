"""Command line: convert a checkpoint for the app, or check ONNX graphs as the uploader does.

    python -m upload.convert ckpt.pt --meta meta.pkl --out DIR   # nanoGPT -> ours + ONNX
    python -m upload.convert mine.safetensors --out DIR          # ours -> ONNX graphs
    python -m upload.convert path/to/gpt2 --out DIR [--onnx]    # a GPT-2-family folder -> ours
    python -m upload.convert model.inspect.onnx [model.fast.onnx ...]  # check, print the card
    python -m upload.convert model.onnx --tokenizer tokenizer.json  # any ONNX language model

Every file is read by the same isolated worker the app uses (``upload/worker.py``). A
refused file prints one line on stderr, ``refused: <file>: <what is wrong>``, and exits
with code 2; ``--debug`` adds the traceback and what the worker printed.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from pathlib import Path

from upload.errors import UploadError


def _print_card(card) -> None:
    """A :class:`~models.card.ModelCard` as ``key: value`` lines, its config flattened."""
    rows = {"source": card.source, "parameters": card.parameters, **card.config}
    for key, value in rows.items():
        print(f"{key}: {value:,}" if type(value) is int else f"{key}: {value}")
    for note in card.notes:
        print(f"note: {note}")


def _read(paths: list[Path]) -> dict[str, bytes]:
    files = {}
    for path in paths:
        try:
            files[path.name] = path.read_bytes()
        except OSError as exc:
            raise UploadError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    return files


def _convert_checkpoint(files: dict[str, bytes], out: Path) -> None:
    import torch

    from export.graphs import export_model
    from models.checkpoint import build_model, save_checkpoint
    from upload.load import convert, main_file, safe_filename
    from upload.tokenizer_spec import build

    name = main_file(files)
    cfg, spec, weights = convert(files, " + ".join(files), lambda f, m: None)
    tokenizer = build(spec)
    model = build_model(cfg, {k: torch.from_numpy(v) for k, v in weights.items()}, name)
    stem = safe_filename(name, "")
    path = out / f"{stem}.safetensors"
    save_checkpoint(path, model, tokenizer, {"converted_from": name})
    print(f"wrote {path} ({model.num_parameters():,} parameters)")
    for graph in export_model(model, out, tokenizer, prefix=stem):
        print(f"wrote {graph} ({graph.stat().st_size / 1e6:.2f} MB)")


def _mb(n: int) -> str:
    return f"{n / 1e6:,.1f} MB"


def _folder(args: argparse.Namespace) -> None:
    """A GPT-2-family folder (``upload/folders.py``) -> one upload file (and, with
    ``--onnx``, its graphs), and whether the browser would accept it."""
    from upload.folders import convert_folder

    if len(args.files) != 1 or args.out is None or args.meta or args.tokenizer:
        raise UploadError("convert one GPT-2-family folder at a time, with --out DIR")
    folder = args.files[0]
    done = convert_folder(folder, args.out, onnx=args.onnx, report=print)
    peak = done.read.peak_bytes
    memory = f"; the worker's peak memory {_mb(peak)}" if peak else ""
    print(
        f"read {folder.name}/ in an isolated worker ({_mb(done.read.file_bytes)} of weights{memory})"
    )
    print(f"wrote {done.path} ({_mb(done.path.stat().st_size)}, {done.parameters:,} parameters)")
    for graph in done.graphs:
        print(f"wrote {graph} ({_mb(graph.stat().st_size)})")
    if done.browser_refusal:
        print(
            f"too large for a browser upload ({done.browser_refusal}): whoever runs the "
            f"server can serve it to every session with make run MODEL={folder}"
        )
    else:
        print(f"the browser accepts it: upload {done.path} under Inspect your own model")


def run(args: argparse.Namespace) -> None:
    """Do what the arguments ask. Raises UploadError for a refused input."""
    if any(p.is_dir() for p in args.files):  # a GPT-2-family folder: its own input kind
        _folder(args)
        return
    paths = list(args.files) + [p for p in (args.meta, args.tokenizer) if p]
    files = _read(paths)
    if any(p.suffix.lower() == ".onnx" for p in paths):
        from upload.load import load_upload

        model = load_upload(files)
        try:
            print(f"accepted: {model.name.removeprefix('upload: ')}")
            _print_card(model.card)
        finally:
            model.close()
        return
    if len(args.files) != 1 or args.out is None:
        raise UploadError("convert one checkpoint at a time, with --out DIR")
    _convert_checkpoint(files, args.out)


def main(argv: list[str] | None = None) -> None:
    """CLI entry. Exits 2 with one line on stderr when an input is refused."""
    parser = argparse.ArgumentParser(
        description="Convert a checkpoint or a GPT-2-family folder to ours (+ ONNX graphs), "
        "or check ONNX graphs."
    )
    parser.add_argument(
        "files",
        nargs="+",
        type=Path,
        help="nanoGPT ckpt.pt, our .safetensors, .onnx graphs, or a GPT-2-family folder",
    )
    parser.add_argument("--meta", type=Path, default=None, help="nanoGPT meta.pkl")
    parser.add_argument(
        "--tokenizer",
        type=Path,
        default=None,
        help="tokenizer.json of an ONNX language model not made here (its attention is found)",
    )
    parser.add_argument("--out", type=Path, default=None, help="output folder (checkpoints)")
    parser.add_argument(
        "--onnx", action="store_true", help="a folder: also write the ONNX graphs beside it"
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    args = parser.parse_args(argv)
    try:
        run(args)
    except UploadError as exc:
        if args.debug:
            traceback.print_exc()
        print(f"refused: {exc}", file=sys.stderr)
        sys.exit(2)
    except Exception as exc:  # noqa: BLE001 - one line for the user, the trace with --debug
        if args.debug:
            traceback.print_exc()
        print(
            f"failed: {type(exc).__name__}: {str(exc)[:300]} (rerun with --debug)", file=sys.stderr
        )
        sys.exit(2)


if __name__ == "__main__":
    main()
