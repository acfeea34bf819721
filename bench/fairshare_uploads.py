"""Fair share (issue #25), the upload attacks: what students' uploads do to another session.

A real ``streamlit run app.py``. Each attacker is a websocket session
(``bench/stclient.py``) that puts files into the sidebar's "Checkpoint files" uploader
through Streamlit's own upload route, clicks "Load uploaded model" and, for some cases,
types a sentence into the uploaded model. Meanwhile another student's session
(:func:`bench.fairshare.student`) alternates a head change and a new sentence on the
shipped model and times each rerun, for as long as the attack lasts; its baseline is
measured alone just before. A new session is opened during the attack. The server's
upload workers (its child processes) are sampled every 0.2 s: their total resident
memory is compared with the server's budget (``upload.limits.WORKERS_MEMORY_BYTES``).

The cases (issue #25's list):

* ``huge vocabulary``: a nanoGPT checkpoint with a 262,144-word vocabulary (the upload
  limit, ``MAX_VOCAB``), then a sentence of 30 unknown words (suggestions from it);
* ``long context``: a nanoGPT checkpoint with a context of 2,048, then 2,000 characters
  (the server cuts the sentence to what its analysis budget fits);
* ``slow graph``: an ONNX graph that runs for minutes at 6 tokens only, then a sentence
  of 6 tokens (its worker's deadline refuses it in one line);
* ``ten uploads``: ten sessions uploading an ONNX graph at once (the softmax inspect
  graph: each session's graph runs in a worker of its own, all ten alive after);
* ``ten checkpoints`` (the bench only: about two minutes): ten sessions uploading ten
  different checkpoints at once, ten exports (the workers' budget queues them: "your
  upload is number k in line").
"""

from __future__ import annotations

import asyncio
import random
import string
import time
from pathlib import Path

import psutil

from bench import cpu_share
from bench.fairshare import (
    LONG_CONTEXT,
    QUERY,
    SUGGESTIONS,
    churn_case,
    compared,
    flood_case,
    in_process,
    open_s,
    paragraph_case,
    student,
)
from bench.hostile import nanogpt_ckpt, nanogpt_files
from bench.stclient import Run, Session
from bench.stwidgets import shown
from deploy.launch import ROOT, Server, serve
from upload.limits import WORKERS_MEMORY_BYTES

UPLOADER = ("Checkpoint files", "upload_files")
LOAD = ("Load uploaded model", "upload_go")
TEXT = ("text", "Type a sentence")
UPLOAD_TIMEOUT_S = 900.0  # one attacker's load: its worker may wait for CPU at SCHED_IDLE
RSS_WITHIN_MB = 100.0  # issue #25: the server's RSS after an attack, within this of before
SETTLE_S = 60.0  # the session TTL (30 s) and two sweeps (10 s), with room
CASES = ("huge vocabulary", "long context", "slow graph", "ten uploads")  # the test's
BENCH_CASES = (*CASES, "ten checkpoints")
# Each case's baseline (s): about as long as its attack (``bench.fairshare.matched``);
# ten exports take 70-80 s, the other cases about 20 s.
BASE_S = {"ten checkpoints": 70.0}


def base_s(name: str, quick: bool = False) -> float:
    """The baseline's length for case ``name`` (3 s with ``quick``)."""
    return 3.0 if quick else BASE_S.get(name, 20.0)


def huge_vocabulary_files(words: int = 262_144) -> dict[str, bytes]:
    """A nanoGPT checkpoint (1 layer, 16 wide) with this project's word-level tokenizer of
    ``words`` entries (3- and 4-letter words): about 17 + 4 MB."""
    from models.tokenizer import ALPHABET, UNK, wordpiece_tokenizer

    vocab = {t: i for i, t in enumerate([UNK, *ALPHABET, *("##" + c for c in ALPHABET)])}
    letters = string.ascii_lowercase
    for n in range(26**2, 26**2 + words - len(vocab)):
        w = letters[n % 26] + letters[n // 26 % 26] + letters[n // 676 % 26]
        vocab[w + (letters[n // 17576] if n >= 17576 else "")] = len(vocab)
    tokenizer = wordpiece_tokenizer(vocab).to_str().encode()
    ckpt = nanogpt_ckpt(len(vocab), n_layer=1, block_size=64)
    return {"ckpt.pt": ckpt, "tokenizer.json": tokenizer}


def unknown_words(n: int = 30, seed: int = 0) -> str:
    """``n`` made-up 5-letter words (none of them in :func:`huge_vocabulary_files`)."""
    rng = random.Random(seed)
    return " ".join("".join(rng.choice(string.ascii_lowercase) for _ in range(5)) for _ in range(n))


def case_files(name: str, shipped_inspect: bytes | None = None) -> list[dict[str, bytes]]:
    """The files each attacker of case ``name`` uploads (one dict per attacker).
    ``shipped_inspect``: the softmax inspect graph (bytes) the slow graph is made from."""

    if name == "huge vocabulary":
        return [huge_vocabulary_files()]
    if name == "long context":
        return [nanogpt_files(n_layer=2, n_head=3, n_embd=48, block_size=2048)]
    if name == "slow graph":
        import onnx

        from bench.hostile import rewire_output, slow_at_length

        slow = rewire_output(onnx.load_from_string(shipped_inspect), "logits", slow_at_length(6))
        return [{"slow.inspect.onnx": slow.SerializeToString()}]
    if name == "ten uploads":
        return [{f"mine{i}.inspect.onnx": shipped_inspect} for i in range(10)]
    if name == "ten checkpoints":
        return [nanogpt_files(seed=i) for i in range(10)]
    raise ValueError(f"no upload case {name!r}; cases: {BENCH_CASES}")


SENTENCE = {  # what the attacker types into its model once loaded
    "huge vocabulary": unknown_words(),
    "long context": ("First Citizen:\nBefore we proceed any further, hear me speak." * 40)[:2000],
    "slow graph": "the cat sat on the mat",  # 6 tokens: the length that sets it off
}


def said(run: Run) -> list[str]:
    """The alerts (error, warning, info, success) a run left on the page."""
    return [
        shown(e.alert.body) for e, _ in run.elements.values() if e.WhichOneof("type") == "alert"
    ]


async def _attacker(server: Server, files: dict[str, bytes], sentence: str | None) -> dict:
    """Open the page, upload ``files``, load them, then type ``sentence``: what it saw."""
    start = time.perf_counter()
    async with Session(server.ws_url, dict(QUERY), timeout_s=UPLOAD_TIMEOUT_S) as s:
        await s.open()
        await s.upload(UPLOADER, files)
        run = await s.click(LOAD)
        out = {"load_said": said(run), "model": run.widget("Model", "model").value}
        out["load_s"] = round(time.perf_counter() - start, 1)
        if sentence is not None and "Not loaded" not in " ".join(out["load_said"]):
            run = await s.set(TEXT, sentence)
            out["sentence_said"] = said(run)
            out["sentence_exceptions"] = run.exceptions()
    return out


async def _sample_workers(server: Server, stop: asyncio.Event, peak: dict) -> None:
    """Every 0.2 s until ``stop``: the server's child processes' total RSS (``peak["mb"]``,
    ``peak["workers"]``: the most at once)."""
    root = psutil.Process(server.pid)
    while not stop.is_set():
        total, n = 0, 0
        for child in root.children(recursive=True):
            try:
                total += child.memory_info().rss
                n += 1
            except psutil.Error:
                pass
        peak["mb"] = max(peak.get("mb", 0), round(total / 2**20))
        peak["workers"] = max(peak.get("workers", 0), n)
        await asyncio.sleep(0.2)


async def settled_rss(server: Server, before_mb: float, timeout_s: float) -> tuple[int, float]:
    """The server's RSS (MB) once it is back within ``RSS_WITHIN_MB`` of ``before_mb``, or
    after ``timeout_s``; and the seconds that took. The server drops a closed tab's session
    ``disconnectedSessionTTL`` after it closed (.streamlit/config.toml: 30 s), then hands
    its memory back at its next sweep (``ui.server_start.REAP_EVERY_S``)."""
    start = time.perf_counter()
    while (rss := server.rss_mb()) > before_mb + RSS_WITHIN_MB:
        if time.perf_counter() - start > timeout_s:
            break
        await asyncio.sleep(1.0)
    return round(rss), round(time.perf_counter() - start, 1)


async def upload_case(
    server: Server,
    name: str,
    files: list[dict[str, bytes]],
    base_s: float = 20.0,
    settle_s: float = 0.0,
) -> dict:
    """Baseline (``base_s`` seconds: about as long as an upload case's attack, see
    ``bench.fairshare.matched``), then the attackers of case ``name`` (one per entry of
    ``files``) with the other student measuring until the last attacker is done, and a
    new session opened meanwhile; then, with ``settle_s``, the server's RSS once the
    attackers' closed sessions were dropped (:func:`settled_rss`, waiting at most that
    long)."""
    rss0 = server.rss_mb()
    base = await student(server, base_s)
    stop, peak = asyncio.Event(), {}
    cpu0 = cpu_share.read()
    sampler = asyncio.create_task(_sample_workers(server, stop, peak))
    attack = [asyncio.create_task(_attacker(server, f, SENTENCE.get(name))) for f in files]
    await asyncio.sleep(1)
    other = asyncio.create_task(student(server, 1, until=lambda: all(t.done() for t in attack)))
    during_open = await open_s(server)
    attackers = await asyncio.gather(*attack, return_exceptions=True)
    during = await other
    stop.set()
    await sampler
    free = cpu_share.free_share(cpu0, cpu_share.read())
    rss_after = round(server.rss_mb())
    settled = await settled_rss(server, rss0, settle_s) if settle_s else (None, None)
    return {
        "case": name,
        "attackers": [a if isinstance(a, dict) else {"error": repr(a)} for a in attackers],
        **compared(base, during),
        "open_during_s": None if during_open is None else round(during_open, 2),
        "cpu_free_share": free,
        "workers_peak_mb": peak.get("mb", 0),
        "workers_peak": peak.get("workers", 0),
        "workers_budget_mb": WORKERS_MEMORY_BYTES // 2**20,
        "rss_before_mb": round(rss0),
        "rss_after_mb": rss_after,
        "rss_settled_mb": settled[0],
        "settled_s": settled[1],
    }


def fair_share(quick: bool = False) -> dict:
    """Every measurement of the section: the attacks of ``bench.fairshare`` (flood,
    paragraphs, in process) and the upload cases of this module."""
    from bench.common import EXPORTED

    seconds = 8.0 if quick else 20.0
    inspect = (EXPORTED / "softmax.inspect.onnx").read_bytes()
    out: dict = {}
    with serve() as server:
        asyncio.run(open_s(server))  # the server's first run installs the rerun gate
        out["flood"] = asyncio.run(flood_case(server, 500.0, seconds))
        out["paragraph_1"] = asyncio.run(paragraph_case(server, 1, seconds))
        out["paragraph_3"] = asyncio.run(paragraph_case(server, 3, seconds))
        out["churn_16"] = churn(server, seconds)
        out["uploads"] = [
            asyncio.run(
                upload_case(server, name, case_files(name, inspect), base_s(name, quick), SETTLE_S)
            )
            for name in BENCH_CASES
        ]
    out["long_context"] = in_process(LONG_CONTEXT)
    out["suggestions"] = in_process(SUGGESTIONS)
    return out


def churn(server: Server, seconds: float) -> dict:
    """16 connections opening and closing sessions (issue #50), when and where it ran."""
    import datetime
    import os

    case = asyncio.run(churn_case(server, 16, seconds))
    case["date"] = datetime.date.today().isoformat()
    case["loadavg_start"] = os.getloadavg()[0]
    return case


def churn_only(results_json: Path) -> dict:
    """Measure only the session churn on a fresh server and put it into ``results_json``'s
    fair-share section (its summary.md and the README's table rewritten), the other
    measurements kept: ``python -m bench.fairshare_uploads --churn``."""
    import json

    from bench.report import update_readme, write_summary

    with serve() as server:
        asyncio.run(open_s(server))
        case = churn(server, 20.0)
    results = json.loads(results_json.read_text())
    results["fair_share"]["churn_16"] = case
    results_json.write_text(json.dumps(results, indent=1))
    write_summary(results_json)
    update_readme(ROOT / "README.md", results)
    return case


def main() -> None:
    import json
    import sys

    if sys.argv[1:] == ["--churn"]:
        print(json.dumps(churn_only(ROOT / "bench" / "results" / "results.json"), indent=1))
    else:
        print(json.dumps(fair_share(), indent=1))


if __name__ == "__main__":
    main()
