"""``attnviz``: the one command of the installed package (``pip install .``).

    attnviz serve [--model DIR ...] [--context N] [--port N] [STREAMLIT OPTIONS]
    attnviz convert ckpt.pt --meta meta.pkl --out converted/
    attnviz train / export / evaluate / bench ... (and the translation models' three)

Each subcommand runs the same code as the clone's ``python -m ...`` entry point
(:data:`COMMANDS`), with the rest of the line as its arguments: ``attnviz train --help``
is ``python -m training.train --help``. ``serve`` is ``make run``: ``python -m ui.launch``
with ``MALLOC_ARENA_MAX=2``, run from the tree's root so Streamlit reads its
``.streamlit/config.toml`` (headless, the upload limit) wherever it is started.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path

# subcommand -> (module whose main(argv) it runs, one line of help)
COMMANDS = {
    "serve": ("ui.launch", "run the app on the shipped models (make run): --model DIR, --port N"),
    "convert": ("upload.convert", "convert a checkpoint or folder into one upload file"),
    "train": ("training.train", "train a small transformer language model"),
    "export": ("export.graphs", "export checkpoints to the app's ONNX graphs"),
    "evaluate": ("training.evaluate", "evaluate checkpoints and write the model card"),
    "bench": ("bench.__main__", "run the benchmarks"),
    "train-seq2seq": ("training.seq2seq", "train a translation model (GRU, Bahdanau, transformer)"),
    "export-seq2seq": ("export.seq2seq", "export the translation models to ONNX"),
    "evaluate-seq2seq": ("training.evaluate_seq2seq", "measure the translation models"),
}
ARENA_MAX = "2"  # MALLOC_ARENA_MAX of the server, as `make run` sets it


def root() -> Path:
    """The tree's root: the clone, or ``site-packages/attention_visualizer`` when
    installed (both hold ``app.py``, ``exported/`` and ``.streamlit/``)."""
    return Path(__file__).resolve().parents[1]


def usage() -> str:
    """The top-level help: every subcommand and what it runs."""
    rows = "\n".join(f"  {name:<17}{text} (python -m {module.removesuffix('.__main__')})"
                     for name, (module, text) in COMMANDS.items())  # fmt: skip
    return (
        "usage: attnviz COMMAND [ARGS ...]\n\n"
        "The attention visualizer: its app, its models and its tools.\n\n"
        f"commands:\n{rows}\n\n"
        "attnviz COMMAND --help shows a command's own arguments. In Python: import attnviz "
        "(the notebook API)."
    )


def serve_parser() -> argparse.ArgumentParser:
    """``serve``'s own arguments; the rest go to Streamlit (``--server.address``, ...)."""
    p = argparse.ArgumentParser(
        prog="attnviz serve",
        description="Run the app (make run): the shipped models, and Hugging Face folders "
        "served to every session.",
    )
    p.add_argument("--model", action="append", type=Path, default=[], metavar="DIR",
                   help="a Hugging Face folder to serve beside the shipped models (repeatable)")  # fmt: skip
    p.add_argument("--context", type=int, default=None, metavar="N",
                   help="serve those folders with their first N positions only")  # fmt: skip
    p.add_argument("--port", type=int, default=None, metavar="N", help="port (default 8501)")
    return p


def serve_argv(argv: list[str]) -> list[str]:
    """``attnviz serve``'s arguments as ``python -m ui.launch``'s (Streamlit's options,
    then ``--`` and the app's ``--model`` folders, made absolute).

    Raises:
        SystemExit: a ``--model`` that is not a folder (one line, exit code 2).
    """
    args, streamlit_options = serve_parser().parse_known_args(argv)
    for folder in args.model:
        if not folder.is_dir():
            sys.exit(f"attnviz serve: --model {folder}: not a folder (give a Hugging Face "
                     "folder: config.json, tokenizer.json and the weights)")  # fmt: skip
    options = [*streamlit_options]
    options += ["--server.port", str(args.port)] if args.port is not None else []
    app = [arg for folder in args.model for arg in ("--model", str(folder.resolve()))]
    app += ["--context", str(args.context)] if args.context is not None else []
    return options + (["--", *app] if app else [])


def serve(argv: list[str]) -> None:
    """Replace this process with ``python -m ui.launch`` (``make run``), from the root."""
    launch = serve_argv(argv)
    env = {**os.environ, "MALLOC_ARENA_MAX": os.environ.get("MALLOC_ARENA_MAX", ARENA_MAX)}
    os.chdir(root())
    os.execve(sys.executable, [sys.executable, "-m", "ui.launch", *launch], env)


def main(argv: list[str] | None = None) -> None:
    """Run the subcommand named first in ``argv`` with the rest of it."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(usage())
        return
    command, rest = argv[0], argv[1:]
    if command not in COMMANDS:
        sys.exit(f"attnviz: no command {command!r}: one of {', '.join(COMMANDS)} (attnviz --help)")
    if command == "serve":
        serve(rest)
        return
    program, sys.argv[0] = sys.argv[0], f"attnviz {command}"  # its --help names it so
    try:
        importlib.import_module(COMMANDS[command][0]).main(rest)
    finally:
        sys.argv[0] = program


if __name__ == "__main__":
    main()
