"""Command line: convert a checkpoint into one upload file, or check ONNX graphs as the
uploader does.

    python -m upload.convert ckpt.pt --meta meta.pkl --out converted/        # nanoGPT, characters
    python -m upload.convert ckpt.pt --tokenizer tokenizer.json --out converted/  # GPT-2 vocabulary
    python -m upload.convert mine.safetensors --out DIR --onnx    # ours -> ONNX graphs
    python -m upload.convert path/to/gpt2 --out DIR [--onnx]      # a Hugging Face folder
    python -m upload.convert path/to/gpt2 --out DIR --context 256  # a shorter context
    python -m upload.convert model.inspect.onnx [model.fast.onnx ...]  # check, print the card
    python -m upload.convert model.onnx --tokenizer tokenizer.json  # any ONNX language model
    python -m upload.convert model.onnx --out DIR  # its external data folded in: one file

A checkpoint becomes ONE compact upload file, ``DIR/<name>.safetensors`` (float32
weights, config, tokenizer, and the training record: a nanoGPT run's ``iter_num``,
``best_val_loss`` and settings), which the app's uploader accepts; ``--onnx`` also
writes the ONNX graphs; ``--context N`` keeps the first N positions (a learned position
embedding's first N rows, ``upload.local.with_context``), so that a model whose full
context the app's uploader refuses (GPT-2's 1,024 tokens: its logits alone are
T x 50,257 values) becomes one it accepts. Local checkpoints of any size are read by path
(``upload/local.py``): nanoGPT's ``ckpt.pt`` holds the optimizer state too (its
shakespeare-char run: 129 MB for 43 MB of weights), and only the weights are read; a
Hugging Face folder (``upload/folders.py``) likewise.

Every file is read by the same isolated worker the app uses (``upload/worker.py``). A
refused file prints one line on stderr, ``refused: <file>: <what is wrong>``, and exits
with code 2; ``--debug`` adds the traceback and what the worker printed.

Each kind of input (``INPUT_KINDS``) is one function of the parsed arguments; a new kind
is one more entry.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from upload.errors import UploadError
from upload.sizes import CHECKPOINT_SUFFIXES

if TYPE_CHECKING:
    from upload.local import Written


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


def _report(written: Written, serve: str = "") -> None:
    """What was read and written, on stdout; ``serve`` says how a server would serve a
    model its uploader refuses (a folder's ``make run MODEL=DIR``)."""
    from upload.load import card
    from upload.local import mb

    read = written.read
    memory = ""
    if read.peak_bytes is not None and read.rss_bytes is not None:
        memory = (
            f" (peak memory {mb(read.peak_bytes)}: {mb(read.peak_bytes - read.rss_bytes)} "
            "more than before it read the files)"
        )
    print(f"read {mb(read.file_bytes)} in an isolated worker{memory}")
    size = written.path.stat().st_size
    print(f"wrote {written.path} ({mb(size)}, {written.parameters:,} parameters)")
    for graph in written.graphs:
        print(f"wrote {graph} ({mb(graph.stat().st_size)})")
    cfg, spec, _, training = read.converted
    for note in card(cfg, written.parameters, read.source, "", spec, training=training).notes:
        print(f"note: {note}")
    if written.browser_refusal:
        print(
            f"note: the app's uploader would refuse {written.path.name} "
            f"({written.browser_refusal}); whoever runs the app's server can serve it to "
            f"every session instead{serve}"
        )
    else:
        print(f"upload {written.path} in the app (Inspect your own model)")


def _onnx(args: argparse.Namespace) -> bool | str:
    """``write_upload``'s ``onnx``: False, True (every graph) or "inspect" (that alone)."""
    if args.inspect_only and not args.onnx:
        raise UploadError("--inspect-only goes with --onnx (it chooses which graphs to write)")
    return "inspect" if args.onnx and args.inspect_only else args.onnx


def _checkpoint(args: argparse.Namespace) -> None:
    """A nanoGPT ckpt.pt (with --meta or --tokenizer) or our .safetensors -> upload file."""
    if args.out is None:
        raise UploadError("convert a checkpoint with --out DIR (the folder to write to)")
    paths = {p.name: p for p in [*args.files, args.meta, args.tokenizer] if p is not None}
    if len(paths) != len(args.files) + (args.meta is not None) + (args.tokenizer is not None):
        raise UploadError("give files of different names")
    from upload.local import convert_files

    _report(convert_files(paths, args.out, _onnx(args), context=args.context))


def _folder(args: argparse.Namespace) -> None:
    """A Hugging Face folder -> upload file (``upload/folders.py``)."""
    from upload.folders import convert_folder

    if len(args.files) != 1 or args.out is None or args.meta or args.tokenizer:
        raise UploadError("convert one Hugging Face folder at a time, with --out DIR")
    folder = args.files[0]
    done = convert_folder(folder, args.out, _onnx(args), context=args.context)
    _report(done, f" with make run MODEL={folder}")


def _graphs(args: argparse.Namespace) -> None:
    """ONNX graphs (contract graphs, or one foreign language model with --tokenizer or
    --meta): checked and test-run as the uploader does; the card is printed."""
    from upload.load import load_upload

    if args.context is not None:
        raise UploadError(
            "--context shortens a checkpoint or a folder as it is converted; an ONNX graph "
            "is checked as it is (export it with a shorter context instead)"
        )
    paths = list(args.files) + [p for p in (args.meta, args.tokenizer) if p]
    model = load_upload(_read(paths))
    try:
        print(f"accepted: {model.name.removeprefix('upload: ')}")
        _print_card(model.card)
    finally:
        model.close()


def fold_onnx(path: Path, out: Path) -> Path:
    """An .onnx graph whose weights are external data (the dynamo exporter's default:
    ``model.onnx.data`` beside it) -> ``out/<name>.onnx``, one self-contained graph that
    passed the upload's checks, folded in a one-shot worker (``upload/onnx_fold.py``).

    Raises:
        UploadError: the worker's one-line refusal (the result over the upload's size
            limit, data outside the graph's folder, …), an output that would overwrite
            the input, or WorkerError.
    """
    from upload.client import Worker
    from upload.files import safe_filename
    from upload.limits import CONVERT_TIMEOUT_S, MAX_UPLOAD_BYTES

    target = out / safe_filename(path.name, ".onnx")
    if target.resolve() == path.resolve():
        raise UploadError(f"{path}: --out would overwrite it; choose another folder")

    def expect(reply: dict):
        return lambda name, shape: (
            name == "graph" and len(shape) == 1 and shape[0] <= MAX_UPLOAD_BYTES
        )

    header = {"op": "fold_onnx", "paths": {path.name: str(path.resolve())}}
    _, arrays = Worker(path.name).request(header, CONVERT_TIMEOUT_S, expect=expect)
    out.mkdir(parents=True, exist_ok=True)
    target.write_bytes(arrays["graph"].tobytes())
    return target


def _fold(args: argparse.Namespace) -> None:
    """One .onnx graph with external data -> one self-contained, checked ``DIR/<name>.onnx``
    (:func:`fold_onnx`); with --tokenizer or --meta, then checked as the
    uploader does and its card printed."""
    from upload.local import mb

    target = fold_onnx(args.files[0], args.out)
    print(f"wrote {target} ({mb(target.stat().st_size)}, self-contained, checked as an upload)")
    if args.tokenizer or args.meta:
        _graphs(argparse.Namespace(**{**vars(args), "files": [target]}))
    else:
        print(f"upload {target} in the app with its tokenizer.json (Inspect your own model)")


def input_kind(args: argparse.Namespace) -> str:
    """Which of ``INPUT_KINDS`` the arguments are: "folder" (a Hugging Face folder),
    "onnx" (graphs to check, a foreign one with its vocabulary), "onnx_fold" (one .onnx
    with --out: its external data folded in) or "checkpoint" (one nanoGPT ``.pt`` or our
    ``.safetensors``).

    Raises:
        UploadError: any other combination.
    """
    if any(p.is_dir() for p in args.files):
        return "folder"
    suffixes = [p.suffix.lower() for p in args.files]
    if ".onnx" in suffixes:
        return "onnx_fold" if args.out is not None and suffixes == [".onnx"] else "onnx"
    if len(suffixes) == 1 and suffixes[0] in (*CHECKPOINT_SUFFIXES, ".safetensors"):
        return "checkpoint"
    raise UploadError(
        "convert one checkpoint at a time (a nanoGPT ckpt.pt with --meta meta.pkl or "
        "--tokenizer tokenizer.json, or a .safetensors, or a Hugging Face folder), with "
        "--out DIR; or check .onnx graphs"
    )


INPUT_KINDS: dict[str, Callable[[argparse.Namespace], None]] = {
    "folder": _folder,
    "onnx": _graphs,
    "onnx_fold": _fold,
    "checkpoint": _checkpoint,
}


def run(args: argparse.Namespace) -> None:
    """Do what the arguments ask. Raises UploadError for a refused input."""
    INPUT_KINDS[input_kind(args)](args)


def parser() -> argparse.ArgumentParser:
    """The command line's arguments."""
    p = argparse.ArgumentParser(
        prog="python -m upload.convert",
        description="Convert a checkpoint (nanoGPT's ckpt.pt, optimizer state and all; ours; "
        "a Hugging Face folder) into one .safetensors file, or check ONNX graphs.",
    )
    p.add_argument(
        "files",
        nargs="+",
        type=Path,
        help="nanoGPT ckpt.pt, our .safetensors, .onnx graphs, or a Hugging Face folder",
    )
    p.add_argument("--meta", type=Path, default=None, help="nanoGPT meta.pkl (characters)")
    p.add_argument(
        "--tokenizer",
        type=Path,
        default=None,
        help="tokenizer.json: GPT-2's, for a nanoGPT model with GPT-2's vocabulary; or that "
        "of an ONNX language model not made here (its attention is found)",
    )
    p.add_argument("--out", type=Path, default=None, help="output folder (checkpoints)")
    p.add_argument("--onnx", action="store_true", help="also write the ONNX graphs")
    p.add_argument(
        "--inspect-only",
        action="store_true",
        help="with --onnx: the inspect graph alone (what a served model opens)",
    )
    p.add_argument(
        "--context",
        type=int,
        default=None,
        metavar="N",
        help="keep the model's first N positions (checkpoints and folders): the uploader "
        "refuses a model whose outputs at its full context (logits T x V, attention "
        "L x H x T x T) exceed its limit, and names the N that fits",
    )
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def main(argv: list[str] | None = None) -> None:
    """CLI entry. Exits 2 with one line on stderr when an input is refused."""
    args = parser().parse_args(argv)
    try:
        run(args)
    except UploadError as exc:
        if args.debug:
            traceback.print_exc()
        flags = " (--meta meta.pkl or --tokenizer tokenizer.json)"
        print(
            f"refused: {exc}{flags if 'needs its vocabulary' in str(exc) else ''}", file=sys.stderr
        )
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
