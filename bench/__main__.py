"""``python -m bench [--quick] [--out DIR] [--only latency,...] [--merge] [--set k=v,...] [--models DIR]``.

Writes ``<out>/results.json`` (with the machine it ran on), ``<out>/summary.md``
(target, measured, met?) and plots (``<out>/*.png`` rendered by kaleido through
Chromium). A full run (no ``--quick``) into the
default ``bench/results`` also rewrites the README's benchmark section. ``--quick``
writes to a temporary folder unless ``--out`` is given, so it never overwrites the
committed results. ``--merge`` keeps the sections of the results.json being replaced
that this run does not measure (``--only``); ``--set sessions=10,reruns=200`` changes
sizes (``bench.suite.Sizes`` fields; tuples as ``8/32/64``).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from bench.common import EXPORTED
from bench.report import update_readme
from bench.suite import SECTIONS, Sizes, run, sized

RESULTS = Path(__file__).resolve().parent / "results"
README = Path(__file__).resolve().parents[1] / "README.md"
QUICK_OUT = Path(tempfile.gettempdir()) / "bench-quick"


def main(argv: list[str] | None = None) -> None:
    """Parse the command line, run the sections, print the summary."""
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes (for tests)")
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help=f"output folder (default {RESULTS}; --quick: {QUICK_OUT})",
    )
    parser.add_argument(
        "--only", default=",".join(SECTIONS), help=f"comma-separated subset of {','.join(SECTIONS)}"
    )
    parser.add_argument("--models", type=Path, default=EXPORTED, help="folder of shipped graphs")
    parser.add_argument(
        "--merge", action="store_true", help="keep the other sections of the results.json"
    )
    parser.add_argument(
        "--set",
        default="",
        metavar="K=V,...",
        help=f"sizes: {', '.join(Sizes.__dataclass_fields__)}",
    )
    args = parser.parse_args(argv)
    only = tuple(s.strip() for s in args.only.split(",") if s.strip())
    unknown = set(only) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown sections: {', '.join(sorted(unknown))}")
    try:
        sizes = sized(args.quick, parse_sizes(args.set, Sizes()))
    except ValueError as err:
        parser.error(str(err))
    out = args.out or (QUICK_OUT if args.quick else RESULTS)
    run(out, only, args.quick, args.models, sizes=sizes, merge=args.merge)
    if not args.quick and out.resolve() == RESULTS.resolve():
        update_readme(README, json.loads((out / "results.json").read_text()))
        print(f"[bench] rewrote the benchmark section of {README.name}")
    print((out / "summary.md").read_text())


def parse_sizes(text: str, like: Sizes) -> dict:
    """``"sessions=10,latency_T=8/32"`` -> ``{"sessions": 10, "latency_T": (8, 32)}``, each
    value of the type of ``like``'s field.

    Raises:
        ValueError: for a malformed pair, an unknown field or a value of the wrong type.
    """
    out = {}
    for pair in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = pair.partition("=")
        if not sep or not hasattr(like, key):
            raise ValueError(f"--set: {pair!r} is not <size>=<value> of a known size")
        default = getattr(like, key)
        if isinstance(default, tuple):
            out[key] = tuple(type(default[0])(v) for v in value.split("/"))
        else:
            out[key] = type(default)(value)
    return out


if __name__ == "__main__":
    main()
