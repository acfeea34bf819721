"""``python -m bench [--quick] [--out bench/results] [--only latency,inference,...]``.

Writes ``<out>/results.json`` (with the machine it ran on), plots
(``<out>/*.png`` rendered by kaleido through Chromium, and interactive ``<out>/*.html``) and
``<out>/summary.md`` (target, measured, met?).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bench.common import EXPORTED
from bench.suite import SECTIONS, run


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes (for tests)")
    parser.add_argument("--out", type=Path, default=Path("bench/results"), help="output folder")
    parser.add_argument(
        "--only", default=",".join(SECTIONS), help=f"comma-separated subset of {','.join(SECTIONS)}"
    )
    parser.add_argument("--models", type=Path, default=EXPORTED, help="folder of shipped graphs")
    args = parser.parse_args(argv)
    only = tuple(s.strip() for s in args.only.split(",") if s.strip())
    unknown = set(only) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown sections: {', '.join(sorted(unknown))}")
    run(args.out, only, args.quick, args.models)
    print((args.out / "summary.md").read_text())


if __name__ == "__main__":
    main()
