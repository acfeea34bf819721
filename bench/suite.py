"""Run the benchmark sections and write ``results.json``, plots and ``summary.md``."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench import speed
from bench.common import BENCH_KINDS as SHIPPED_KINDS
from bench.common import EVERY_KIND, EXPORTED, machine_info, sentence_of, shipped, speed_probe_ms
from bench.report import SECTIONS, write_summary
from export.twins import make_twin
from inference import generation as gen_mod
from inference import measure


@dataclass(frozen=True)
class Sizes:
    """How big each section runs (the full suite, or ``--quick`` for tests)."""

    latency_T: tuple[int, ...] = (8, 32, 64)
    latency_repeats: int = 15
    rerun_sentences: int = 2  # per model and view: L*H - 1 cold and L*H warm head changes
    inference_T: int = 64
    inference_repeats: int = 50
    scaling_T: tuple[int, ...] = (256, 512, 1024, 2048, 4096, 8192)
    scaling_min_repeats: int = 3
    scaling_max_repeats: int = 10
    scaling_ratio_repeats: int = 20  # rounds at T = 4,096, where the ratio is read
    scaling_budget_s: float = 4.0  # per T, both models together
    chunked_T: int = 4096  # linear fast graph before / after chunking (bench/chunked.py); 0: off
    chunked_rounds: int = 10  # alternating calls of each graph
    chunked_starts: int = 3  # fresh processes per graph for its peak memory
    chunked_before: str = ""  # the before graph; "" = the prefix-state form, exported now
    generation_new: int = 1024
    memory_lengths: tuple[int, ...] = (64, 256, 1024, 4096)
    sessions: int = 30  # concurrency: real sessions on a real server
    reruns: int = 1000  # concurrency: reruns of all sessions together
    single_reruns: int = 20  # concurrency: reruns of one session alone
    browser_clicks: int = 16
    browser_sentences: int = 8
    classroom_cells: int = 16  # cell clicks on the attention heatmap
    classroom_steps: int = 18  # lecture steps: Next to the last, Previous to the first
    classroom_presenter: int = 20  # head changes with and without presenter mode, each
    isolation_T: int = 64
    isolation_repeats: int = 50  # rounds of worker / in process / in process, 1 thread
    isolation_starts: int = 7  # fresh workers of each kind (ping, open)
    translation_repeats: int = 20  # greedy translations per model at the longest length
    lab_repeats: int = 10  # timed calls per lab row (bench/lab.py)


QUICK = Sizes(
    latency_T=(4, 8),
    latency_repeats=1,
    rerun_sentences=1,
    inference_T=8,
    inference_repeats=2,
    scaling_T=(16, 32, 64),
    scaling_min_repeats=2,
    scaling_max_repeats=2,
    scaling_ratio_repeats=2,
    scaling_budget_s=0.01,
    chunked_T=0,  # off: exporting the before graph takes ~10 s (tests/bench/test_chunked_bench.py)
    generation_new=8,
    memory_lengths=(4, 16),
    sessions=2,
    reruns=4,
    single_reruns=2,
    browser_clicks=2,
    browser_sentences=1,
    classroom_cells=1,
    classroom_steps=1,
    classroom_presenter=2,
    isolation_T=8,
    isolation_repeats=2,
    isolation_starts=1,
    translation_repeats=2,
    lab_repeats=2,
)


def sized(quick: bool = False, changes: dict | None = None) -> Sizes:
    """The full or ``--quick`` sizes with ``changes`` (field -> value) applied.

    Raises:
        ValueError: for a field :class:`Sizes` does not have.
    """
    base = QUICK if quick else Sizes()
    unknown = set(changes or {}) - set(base.__dict__)
    if unknown:
        raise ValueError(f"unknown sizes {sorted(unknown)}; choose from {sorted(base.__dict__)}")
    return dataclasses.replace(base, **(changes or {}))


def run(
    out: Path,
    only: tuple[str, ...] = SECTIONS,
    quick: bool = False,
    folder: Path = EXPORTED,
    log=print,
    sizes: Sizes | None = None,
    merge: bool = False,
) -> dict:
    """Run the chosen sections on the models in ``folder``; write results under ``out``.

    ``results.json`` is rewritten after every section, then ``summary.md``, then
    the plots (a plot failure is recorded in both, not raised). With ``merge`` the
    other sections of the results.json being replaced are carried over instead of
    dropped (earlier figures: git's history of ``bench/results/results.json``).

    Returns:
        The results dict (also written to ``out/results.json``).

    Raises:
        ValueError: for unknown sections, or ``merge`` into results of the other kind
            (``--quick`` or not).
    """
    unknown = set(only) - set(SECTIONS)
    if unknown:
        raise ValueError(f"unknown sections {sorted(unknown)}; choose from {SECTIONS}")
    logging.getLogger("streamlit").setLevel(logging.ERROR)
    sizes = sizes or (QUICK if quick else Sizes())
    old = _earlier(out / "results.json", quick, merge)
    models = {kind: shipped(kind, folder) for kind in SHIPPED_KINDS}
    every = models | {k: shipped(k, folder) for k in EVERY_KIND if k not in models}
    results: dict = {"machine": machine_info(models["linear"]), "quick": quick, "sizes": {}}
    results["machine"]["loadavg_start"] = list(os.getloadavg())  # 1, 5, 15 min: other load
    results["machine"]["speed_probe_ms_start"] = speed_probe_ms()
    results["sizes"] = sizes.__dict__ | {"models": str(folder)}
    if merge and old:
        _carry_sections(results, old, only)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        twins: dict = {}

        def twin(kind: str):
            if kind not in twins:
                twins[kind] = make_twin(kind, every[kind], folder, Path(tmp) / kind, kv=True)
            return twins[kind]

        for section in [s for s in SECTIONS if s in only]:
            start = time.perf_counter()
            log(f"[bench] {section} ...")
            if section == "latency":
                from bench.latency import app_latency

                results[section] = app_latency(
                    models,
                    list(sizes.latency_T),
                    sizes.latency_repeats,
                    folder,
                    sizes.rerun_sentences,
                )
            elif section == "inference":
                engines = {k: twin(k) for k in every}
                results[section] = speed.inference(
                    engines, sizes.inference_T, sizes.inference_repeats
                )
            elif section == "scaling":
                results[section] = measure.scaling(
                    every,
                    list(sizes.scaling_T),
                    sizes.scaling_max_repeats,
                    sizes.scaling_budget_s,
                    min_repeats=sizes.scaling_min_repeats,
                    ratio_repeats=sizes.scaling_ratio_repeats,
                )
                if sizes.chunked_T:
                    from bench.chunked import compare

                    results[section]["chunked"] = compare(
                        models["linear"], folder, Path(tmp) / "chunked", sizes.chunked_T,
                        sizes.chunked_rounds, sizes.chunked_starts, sizes.chunked_before or None,
                    )  # fmt: skip
            elif section == "generation":
                soft = twin("softmax")
                prompt = _prompt(models["softmax"])
                results[section] = gen_mod.generation(
                    models["linear"], soft.fast, soft.kv, prompt, sizes.generation_new
                )
                results[section]["softmax_weights"] = soft.source
            elif section == "memory":
                results[section] = gen_mod.memory(
                    models["linear"],
                    twin("softmax").kv,
                    models["softmax"].config,
                    list(sizes.memory_lengths),
                )
            elif section in ("concurrency", "browser", "classroom"):  # a real server of app.py
                results[section] = _live(section, sizes, folder, log)
            elif section == "isolation":  # uploads in worker processes; this one the server
                from bench.isolation import isolation

                results[section] = isolation(
                    folder, sizes.isolation_T, sizes.isolation_repeats, sizes.isolation_starts
                )
            elif section == "fair_share":  # attacks on a real server (issue #25)
                from bench.fairshare_uploads import fair_share

                results[section] = fair_share(quick)
            elif section == "checkpoints":
                from bench.checkpoints import checkpoints

                results[section] = checkpoints(folder, quick)
            elif section == "served":
                from bench.served import served

                results[section] = served(quick)
            elif section == "lab":
                from bench.lab import lab_bench

                results[section] = lab_bench(folder, sizes.lab_repeats)
            elif section == "translation":
                from bench.translation import translation_bench

                results[section] = translation_bench(folder, sizes.translation_repeats)
            results[section]["seconds"] = time.perf_counter() - start
            log(f"[bench] {section} done in {results[section]['seconds']:.1f} s")
            (out / "results.json").write_text(json.dumps(results, indent=1))  # partial
    results["machine"]["loadavg_end"] = list(os.getloadavg())
    results["machine"]["speed_probe_ms_end"] = speed_probe_ms()
    path = out / "results.json"
    path.write_text(json.dumps(results, indent=1))
    write_summary(path)
    try:
        from bench.plots import write_plots

        results["plots"] = [p.name for p in write_plots(results, out) if p.suffix == ".png"]
    except Exception as err:  # e.g. no Chromium for kaleido: the numbers are already saved
        results["plots_error"] = f"{type(err).__name__}: {err}"
        log(f"[bench] plots failed: {results['plots_error']}")
    path.write_text(json.dumps(results, indent=1))
    write_summary(path)
    return results


def _earlier(path: Path, quick: bool, merge: bool) -> dict | None:
    """The results.json about to be replaced, if it holds figures of the same kind."""
    if not path.exists():
        return None
    old = json.loads(path.read_text())
    if bool(old.get("quick")) != quick:
        if merge:
            raise ValueError(
                f"cannot merge {'' if quick else 'full '}results into {path}: "
                f"it holds {'quick' if old.get('quick') else 'full'} results"
            )
        return None
    return old


def _carry_sections(results: dict, old: dict, only: tuple[str, ...]) -> None:
    """Copy the sections of ``old`` that this run does not measure, noting their dates."""
    carried = dict(old.get("carried_over") or {})
    for name in SECTIONS:
        if name in old and name not in only:
            results[name] = old[name]
            date = old[name].get("date") or (old.get("machine") or {}).get("date")
            carried.setdefault(name, date)
    results["carried_over"] = {k: v for k, v in carried.items() if k in results and k not in only}


def _live(section: str, sizes: Sizes, folder: Path, log) -> dict:
    """A section that drives a real ``streamlit run app.py`` serving ``folder``'s models;
    a failure is its result."""
    try:
        if section == "concurrency":
            from bench.concurrency import concurrency

            return concurrency(
                sizes.sessions, sizes.reruns, single_reruns=sizes.single_reruns, folder=folder
            )
        if section == "classroom":
            from bench.classroom import classroom

            return classroom(sizes.classroom_cells, sizes.classroom_steps,
                             sizes.classroom_presenter, folder=folder)  # fmt: skip
        from bench.browser import browser

        return browser(sizes.browser_clicks, sizes.browser_sentences, folder=folder)
    except Exception as err:  # the other sections' numbers still count
        import traceback

        log(f"[bench] {section} failed: {err!r}")
        return {"error": traceback.format_exc()[-2000:], "sessions": sizes.sessions}


def _prompt(model) -> list[int]:
    """An 8-token prompt of known words (shorter if the context is tiny)."""
    from models.tokenizer import encode

    n = min(8, model.config.context_length)
    return encode(model.tokenizer, sentence_of(model, n, seed=7)).ids
