"""Command line: convert a checkpoint into one upload file, or check ONNX graphs as the
uploader does.

    python -m upload.convert ckpt.pt --meta meta.pkl --out converted/        # nanoGPT, characters
    python -m upload.convert ckpt.pt --tokenizer tokenizer.json --out converted/  # GPT-2 vocabulary
    python -m upload.convert mine.safetensors --out DIR --onnx    # ours -> ONNX graphs
    python -m upload.convert model.inspect.onnx [model.fast.onnx ...]  # check, print the card
    python -m upload.convert model.onnx --tokenizer tokenizer.json  # any ONNX language model

A checkpoint becomes ONE compact upload file, ``DIR/<name>.safetensors`` (float32
weights, config, tokenizer, and the training record: a nanoGPT run's ``iter_num``,
``best_val_loss`` and settings), which the app's uploader accepts; ``--onnx`` also
writes the ONNX graphs. Local checkpoints of any size are read by path
(``upload/local.py``): nanoGPT's ``ckpt.pt`` holds the optimizer state too (its
shakespeare-char run: 129 MB for 43 MB of weights), and only the weights are read.

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
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from upload.errors import UploadError

CHECKPOINT_SUFFIXES = (".pt", ".pth", ".ckpt")


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


def _mb(n: int) -> str:
    return f"{n / 1e6:,.1f} MB"


@dataclass(frozen=True)
class Written:
    """What a conversion wrote and measured.

    Attributes:
        path: the upload file (``<out>/<name>.safetensors``).
        graphs: the ONNX graphs written beside it (``--onnx``), else empty.
        parameters: the model's distinct parameters.
        read: how the worker read the input (``upload.local.LocalRead``: sizes, memory).
        browser_refusal: why the app's uploader would refuse the file, or "".
    """

    path: Path
    graphs: list[Path]
    parameters: int
    read: object
    browser_refusal: str


def browser_refusal(path: Path, cfg) -> str:
    """Why the app's uploader would refuse the converted file at ``path`` (its size, or a
    config beyond the upload's parameter and activation limits), or ""."""
    from upload.limits import MAX_UPLOAD_BYTES
    from upload.sizes import check_config_size

    size = path.stat().st_size
    if size > MAX_UPLOAD_BYTES:
        return f"{_mb(size)}, over the browser's upload limit of {_mb(MAX_UPLOAD_BYTES)}"
    try:
        check_config_size(path.name, cfg)
    except UploadError as exc:
        return str(exc).removeprefix(f"{path.name}: refused: ")
    return ""


def convert_files(
    paths: dict[str, Path], out: Path, onnx: bool = False, progress: bool | None = None
) -> Written:
    """Local checkpoint files (name -> path) -> ``out/<name>.safetensors`` (and its ONNX
    graphs with ``onnx``), with a progress bar on stderr (``progress``: None shows it on a
    terminal only) through reading, converting, writing and exporting.

    Raises:
        UploadError: a refused input (one line), or WorkerError.
    """
    stages = ["reading in an isolated worker", "converting", "writing"]
    stages += ["exporting ONNX graphs"] if onnx else []
    with tqdm(total=len(stages), unit="stage", disable=None if progress is None else not progress,
              file=sys.stderr, bar_format="{desc}{n}/{total} stages |{bar}| {elapsed}") as bar:  # fmt: skip
        bar.set_description(stages[0])
        from upload.local import read_local

        read = read_local(paths)
        bar.update()
        bar.set_description(stages[1])
        path, graphs, model, tokenizer = _write(read, paths, out, bar, stages)
        bar.set_description("done")
    return Written(path, graphs, model.num_parameters(), read, browser_refusal(path, model.cfg))


def _write(read, paths: dict[str, Path], out: Path, bar, stages: list[str]):
    """Build the model from the checked data, write the upload file (and the graphs)."""
    import torch

    from models.checkpoint import build_model, save_checkpoint
    from upload.load import main_file, safe_filename
    from upload.tokenizer_spec import build

    cfg, spec, weights, training = read.converted
    name = main_file(paths)
    tokenizer = build(spec)
    model = build_model(cfg, {k: torch.from_numpy(v) for k, v in weights.items()}, name)
    bar.update()
    bar.set_description(stages[2])
    stem = safe_filename(name, "")
    path = out / f"{stem}.safetensors"
    record = {**training, "converted_from": training.get("converted_from", name)}
    save_checkpoint(path, model, tokenizer, record)
    bar.update()
    graphs = []
    if len(stages) > 3:
        from export.graphs import export_model

        bar.set_description(stages[3])
        graphs = export_model(model, out, tokenizer, prefix=stem)
        bar.update()
    return path, graphs, model, tokenizer


def _report(written: Written) -> None:
    """What was read and written, on stdout."""
    from upload.load import card

    read = written.read
    memory = ""
    if read.peak_bytes is not None and read.rss_bytes is not None:
        memory = (
            f" (peak memory {_mb(read.peak_bytes)}: {_mb(read.peak_bytes - read.rss_bytes)} "
            "more than before it read the files)"
        )
    print(f"read {_mb(read.file_bytes)} in an isolated worker{memory}")
    size = written.path.stat().st_size
    print(f"wrote {written.path} ({_mb(size)}, {written.parameters:,} parameters)")
    for graph in written.graphs:
        print(f"wrote {graph} ({_mb(graph.stat().st_size)})")
    cfg, spec, _, training = read.converted
    for note in card(cfg, written.parameters, read.source, "", spec, training=training).notes:
        print(f"note: {note}")
    if written.browser_refusal:
        print(
            f"note: the app's uploader would refuse {written.path.name} "
            f"({written.browser_refusal}); whoever runs the app's server can serve it to "
            "every session instead"
        )
    else:
        print(f"upload {written.path} in the app (Inspect your own model)")


def _checkpoint(args: argparse.Namespace) -> None:
    """A nanoGPT ckpt.pt (with --meta or --tokenizer) or our .safetensors -> upload file."""
    if args.out is None:
        raise UploadError("convert a checkpoint with --out DIR (the folder to write to)")
    paths = {p.name: p for p in [*args.files, args.meta, args.tokenizer] if p is not None}
    if len(paths) != len(args.files) + (args.meta is not None) + (args.tokenizer is not None):
        raise UploadError("give files of different names")
    _report(convert_files(paths, args.out, args.onnx))


def _graphs(args: argparse.Namespace) -> None:
    """ONNX graphs (contract graphs, or one foreign language model with --tokenizer or
    --meta): checked and test-run as the uploader does; the card is printed."""
    from upload.load import load_upload

    paths = list(args.files) + [p for p in (args.meta, args.tokenizer) if p]
    model = load_upload(_read(paths))
    try:
        print(f"accepted: {model.name.removeprefix('upload: ')}")
        _print_card(model.card)
    finally:
        model.close()


def input_kind(args: argparse.Namespace) -> str:
    """Which of ``INPUT_KINDS`` the arguments are: "onnx" (graphs to check, a foreign
    one with its vocabulary) or "checkpoint" (one nanoGPT ``.pt`` or our ``.safetensors``).

    Raises:
        UploadError: any other combination.
    """
    suffixes = [p.suffix.lower() for p in args.files]
    if ".onnx" in suffixes:
        return "onnx"
    if len(suffixes) == 1 and suffixes[0] in (*CHECKPOINT_SUFFIXES, ".safetensors"):
        return "checkpoint"
    raise UploadError(
        "convert one checkpoint at a time (a nanoGPT ckpt.pt with --meta meta.pkl or "
        "--tokenizer tokenizer.json, or a .safetensors), with --out DIR; or check .onnx graphs"
    )


INPUT_KINDS: dict[str, Callable[[argparse.Namespace], None]] = {
    "onnx": _graphs,
    "checkpoint": _checkpoint,
}


def run(args: argparse.Namespace) -> None:
    """Do what the arguments ask. Raises UploadError for a refused input."""
    INPUT_KINDS[input_kind(args)](args)


def parser() -> argparse.ArgumentParser:
    """The command line's arguments."""
    p = argparse.ArgumentParser(
        prog="python -m upload.convert",
        description="Convert a checkpoint (nanoGPT's ckpt.pt, optimizer state and all; ours) "
        "into one .safetensors file the app's uploader accepts, or check ONNX graphs.",
    )
    p.add_argument(
        "files", nargs="+", type=Path, help="nanoGPT ckpt.pt, our .safetensors, or .onnx graphs"
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
