"""A served GPT-2-small-sized model's server memory over many long sentences (issue #24).

A real server (``deploy.launch.serve``, as ``make run MODEL=DIR`` runs it: its own
process, ``MALLOC_ARENA_MAX=2``) serves the GPT-2-small-sized random model of
``bench/gpt2_small.py``, its converted graphs placed in the served-model cache, so the
server opens them instead of converting. One session (``bench.stclient``) types
``n`` different sentences of at least ``T`` tokens on the attention view; after each
the server's resident set is read.

    python -m bench.served_memory runs/gpt2bench 30    # converts once into that folder
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
import time
from pathlib import Path

KEY = "gpt2-small"


def sentence(seed: int, words: int = 700) -> str:
    """``words`` random two-letter words (`` ab cd ...``; 2,100 characters, cut to the
    app's 2,000): more than 1,024 tokens of the bench's byte-level tokenizer, different
    for every seed."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    return "".join(" " + rng.choice(letters) + rng.choice(letters) for _ in range(words))


def place_in_cache(folder: Path, converted: Path, cache: Path) -> Path:
    """The converted graphs and checkpoint linked where the server looks for ``folder``'s
    conversion (``<cache>/<key>-<digest>``, as ``ui.served.ServedModels`` names it)."""
    from upload.folders import folder_digest

    dest = cache / f"{KEY}-{folder_digest(folder)[:16]}"
    dest.mkdir(parents=True, exist_ok=True)
    for path in converted.iterdir():
        if path.suffix in (".onnx", ".safetensors") and not (dest / path.name).exists():
            os.link(path, dest / path.name)
    return dest


def _status_mb(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) * 1024 / 1e6
    return 0.0


async def _type(server, n: int, timeout_s: float) -> list[dict]:
    from bench.stclient import Session

    rows = []
    async with Session(server.ws_url, {"model": KEY}, timeout_s=timeout_s) as session:
        run = await session.open()  # a server without item 4 prepares served models now
        deadline = time.monotonic() + timeout_s
        while f"{KEY}: serving" not in server.log():
            if time.monotonic() > deadline or "not served" in server.log():
                raise RuntimeError("the served model did not open: " + server.log()[-1000:])
            await asyncio.sleep(0.5)
        run = await session.open()
        run = await session.set("model", KEY)
        if run.widget("model").value != KEY:
            raise RuntimeError(f"the Model radio shows {run.widget('model').value}, not {KEY}")
        rows.append({"i": -1, "seconds": 0.0, "rss_mb": server.rss_mb(), "peak_mb": 0.0})
        for i in range(n):
            start = time.perf_counter()
            run = await session.set("text", sentence(i))
            if run.exceptions():
                raise RuntimeError(f"sentence {i}: {run.exceptions()}")
            rows.append(
                {
                    "i": i,
                    "seconds": time.perf_counter() - start,
                    "rss_mb": server.rss_mb(),
                    "peak_mb": _status_mb(server.pid, "VmHWM"),
                }
            )
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    return rows


def served_memory(
    base: Path, n: int = 30, timeout_s: float = 900.0, sizes: dict | None = None
) -> dict:
    """``n`` sentences of the served GPT-2-small-sized model (or ``sizes``: a smaller
    one, ``bench.gpt2_small.write_folder``) in one session (the attention view), the
    server's resident set after each.

    Returns:
        ``rss_mb`` (after each sentence), ``peak_mb`` (the server's VmHWM at the end),
        ``opened_mb`` (before the first sentence), ``last20_spread_mb`` (max - min over
        the last 20), ``median_s`` (a sentence's median wall time), ``n``.
    """
    from bench import gpt2_small
    from deploy.launch import serve

    folder, converted = base / "gpt2-small", base / "converted"
    if not (converted / f"{KEY}.inspect.onnx").exists():
        if not (folder / "model.safetensors").exists():
            gpt2_small.write_folder(folder, **(sizes or {}))
        gpt2_small.convert(folder, converted)
    cache = base / "cache"
    place_in_cache(folder, converted, cache)
    env = {"ATTNVIZ_CACHE_DIR": str(cache)}
    with serve(script_args=("--model", str(folder)), env=env) as server:
        rows = asyncio.run(_type(server, n, timeout_s))
    opened, rows = rows[0]["rss_mb"], rows[1:]
    last = [r["rss_mb"] for r in rows[-20:]]
    return {
        "n": n,
        "opened_mb": opened,
        "rss_mb": [round(r["rss_mb"], 1) for r in rows],
        "peak_mb": max(r["peak_mb"] for r in rows),
        "max_rss_mb": max(r["rss_mb"] for r in rows),
        "last20_spread_mb": max(last) - min(last),
        "median_s": sorted(r["seconds"] for r in rows)[len(rows) // 2],
        "T": gpt2_small.GPT2_SMALL["n_positions"] if sizes is None else sizes["n_positions"],
    }


if __name__ == "__main__":
    print(json.dumps(served_memory(Path(sys.argv[1]), int(sys.argv[2]) if sys.argv[2:] else 30)))
