"""Lesson page "Complexity, measured live": time and memory against sequence length,
and generation speed, measured on the shipped models when the teacher presses Measure.

Measurements use ``inference/measure.py`` and ``inference/generation.py`` (the code
``python -m bench`` runs too) at classroom sizes, so the page and the bench report
the same quantities. Nothing runs on a plain rerun. A measurement does not depend on
the session, so it is made once per server and shown to every session (``shared()``),
until someone presses Measure again.
"""

from __future__ import annotations

import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import streamlit as st

from inference import generation as gen_mod
from inference.measure import fit_warnings, scaling
from lessons.architectures import attention_costs
from models.tokenizer import encode
from ui import complexity_shipped, figures, loaders
from ui.lessons.check import check_yourself
from ui.notices import say
from viz import complexity as vc

MAX_T = (256, 512, 1024, 2048)
GEN_TOKENS = (32, 64, 128, 256)
# The two kinds the page measures: quadratic softmax against linear attention (the delta
# model is linear-time too; its ONNX fast graph scans token by token, timed elsewhere).
COMPARED = ("softmax", "linear")
COSTS, N_COSTS = attention_costs("T"), attention_costs("n")  # the lecture's words (step 12)


@dataclass
class Measured:
    """One measurement: ``measure()``'s results and when it finished (``time.time()``)."""

    results: dict
    when: float


@dataclass
class Shared:
    """This server's measurements, shared by every session, by (max_T, n_new).

    ``lock`` lets one measurement run at a time, so sessions do not distort each other.
    """

    results: dict[tuple[int, int], Measured] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def measure(self, max_T: int, n_new: int, pressed: float) -> Measured:
        """Measure, unless a measurement of these sizes finished after ``pressed``
        (another session's, while this one waited for the lock): that one is shown."""
        with self.lock:
            done = self.results.get((max_T, n_new))
            if done is None or done.when < pressed:
                done = Measured(measure(max_T, n_new), time.time())
                self.results[(max_T, n_new)] = done
        return done


@st.cache_resource(show_spinner=False)
def shared() -> Shared:
    """The measurements of this server (one object for every session)."""
    return Shared()


@st.cache_resource(show_spinner="Exporting the key/value-cache graph (once per server)…")
def _kv_decoder():
    """The softmax model's key/value-cache decoding graph and where its weights came from,
    or ``(None, reason)`` when PyTorch is not installed."""
    try:
        from export.twins import make_twin
    except ImportError as exc:
        return None, f"PyTorch is not installed ({exc.name})"
    model = loaders.shipped_model("softmax")
    tmp = Path(tempfile.mkdtemp(prefix="kvcache-"))
    twin = make_twin("softmax", model, loaders.models_dir(), tmp, kv=True)
    return twin, twin.source


def measure(max_T: int, n_new: int) -> dict:
    """Scaling of both fast graphs for T = 64 .. ``max_T`` and ``n_new`` generated tokens."""
    models = {k: loaders.shipped_model(k) for k in COMPARED}
    lengths = [T for T in (64, 128, 256, 512, 1024, 2048) if T <= max_T]
    results = {"scaling": scaling(models, lengths, max_repeats=5, budget_s=0.3)}
    twin, source = _kv_decoder()
    prompt = encode(models["softmax"].tokenizer, "the cat sat on the mat .").ids or [1]
    if twin is not None:
        gen = gen_mod.generation(models["linear"], twin.fast, twin.kv, prompt, n_new)
        gen["softmax_weights"] = source
        results["generation"] = gen
    else:
        results["generation_missing"] = source
    results["provider"] = models["linear"].provider
    return results


def carried(max_len: int) -> dict:
    """Analytic bytes carried between tokens, lengths 16 .. ``max_len`` (powers of 2)."""
    lin, soft = loaders.shipped_model("linear").config, loaders.shipped_model("softmax").config
    lengths = [n for n in (16, 32, 64, 128, 256, 512, 1024) if n < max_len] + [max_len]
    return {
        "length": lengths,
        "state_bytes": [gen_mod.state_bytes(lin) for _ in lengths],
        "kv_cache_bytes": [gen_mod.kv_bytes(soft, n) for n in lengths],
    }


def memory_note(sc: dict) -> str | None:
    """Why the memory chart cannot be drawn, from the measured peaks, or None when
    every peak of both models is a positive number.

    ``peak_mb`` is None where /proc gave no reading (not Linux) and 0 where the
    process's peak did not rise: the peak is a high-water mark, so a later Measure
    that needs no more memory than an earlier run cannot raise it.
    """
    peaks = {k: sc[k]["peak_mb"] for k in COMPARED}
    if any(m is None for p in peaks.values() for m in p):
        return "Peak memory is only measured on Linux (/proc); this server gave no reading."
    zero = [
        f"{k} at T = {T}"
        for k, p in peaks.items()
        for T, m in zip(sc[k]["T"], p, strict=True)
        if m == 0
    ]
    if zero:
        return (
            f"No memory growth measured ({', '.join(zero)}): the process's peak memory is a "
            "high-water mark, and an earlier run had already needed as much, so it did "
            "not rise. A log-log chart cannot show 0, so no memory chart this "
            "time; the times on the left are unaffected."
        )
    return None


def _memory(sc: dict) -> None:
    note = memory_note(sc)
    if note is None:
        figures.plot(vc.scaling_memory(sc), key="cx_mem")
    else:
        say("info", note, icon=":material/memory:")


def _scaling_text(sc: dict) -> None:
    lin, soft = sc["linear"], sc["softmax"]
    T = sc.get("ratio_T", lin["T"][-1])
    lines = [
        f"- **Fitted log-log slopes** over every T (time ∝ T^slope): softmax "
        f"**{soft['slope']:.2f}**, linear **{lin['slope']:.2f}**. Slope 2 means doubling T "
        "quadruples the time (the T × T attention matrix); slope 1 means it doubles."
    ]
    if soft.get("top_slope") is not None and len(soft["T"]) > 1:
        a, b = soft["T"][-2], soft["T"][-1]
        lines.append(
            f"- **Over the longest doubling** (T = {a} → {b}), where the attention matrix "
            f"matters most: softmax's time grew **×{2 ** soft['top_slope']:.1f}** (slope "
            f"{soft['top_slope']:.2f}), linear's **×{2 ** lin['top_slope']:.1f}** (slope "
            f"{lin['top_slope']:.2f})."
        )
    if soft.get("memory_slope") is not None and lin.get("memory_slope") is not None:
        lines.append(
            f"- **Memory slopes:** softmax **{soft['memory_slope']:.2f}**, linear "
            f"**{lin['memory_slope']:.2f}** (peak extra memory of one forward pass)."
        )
    lines.append(
        f"- At T = {T}: softmax takes **{sc['ratio']:.1f}×** as long as linear attention "
        "(ratio = softmax time ÷ linear time, both on their fast graphs, same T)."
    )
    st.markdown("\n".join(lines))
    for warning in fit_warnings(sc):
        say("warning", warning, icon=":material/warning:")


def _check_complexity(sc: dict) -> None:
    """The course's review question on complexity, answered next to the measured slopes."""
    check_yourself(
        "What is the complexity, in the sequence length n, of softmax attention, of an "
        "RNN, and of linear attention?",
        f"**Softmax attention:** {N_COSTS['softmax_time']} time and "
        f"{N_COSTS['softmax_memory']} memory for a sequence; generating one more token "
        "attends over all n earlier ones (O(n·d), with a key/value cache of O(n·d) memory). "
        "**RNN:** O(n·d²) time, and a fixed-size state (O(d) memory) carried from token to "
        f"token. **Linear attention:** {N_COSTS['linear_time']} time and "
        f"{N_COSTS['linear_memory']} memory for a sequence, a fixed d × d state S_i and "
        "normalizer z_i per head: an RNN (Katharopoulos et al. 2020). Measured here: "
        "softmax time grows like "
        f"n^{sc['softmax']['slope']:.2f}, linear like n^{sc['linear']['slope']:.2f} "
        "(the fitted slopes above; at short n fixed costs flatten both).",
        "complexity",
    )


def _generation_text(gen: dict) -> None:
    n = gen["n_new"]
    st.markdown(
        f"Generating {n} tokens greedily after a {gen['prompt_tokens']}-token prompt:\n"
        f"- **Linear (recurrent step) vs softmax recomputing the prefix: "
        f"{gen['speedup_vs_recompute']:.1f}× faster.** Baseline: softmax runs its whole "
        "fast graph on every token so far, for every new token.\n"
        f"- **Linear (recurrent step) vs softmax with a key/value cache: "
        f"{gen['speedup_vs_kv_cache']:.2f}×** (above 1 means linear is faster). Baseline: "
        "softmax keeps every past key and value and attends from just the new token. "
        "This is the fair comparison: both do one token of work per step, but the cache "
        "grows with the length while the linear state stays the same size.\n"
        f"- Softmax key/value-cache weights: {gen.get('softmax_weights', 'shipped model')}."
    )


def _results(max_T: int, n_new: int) -> dict | None:
    """The Measure button, then what to show with its caption: this server's measurement
    of these sizes, else the bench's shipped one (None when neither exists)."""
    store = shared()
    done = store.results.get((max_T, n_new))
    label = "Measure" if done is None else "Measure again"
    if st.button(label, type="primary", key="cx_measure"):
        pressed = time.time()
        with st.spinner("Measuring… (one measurement at a time on this server)"):
            done = store.measure(max_T, n_new, pressed)
    if done is None:
        bench = complexity_shipped.load()
        if bench is not None:
            st.caption(bench.where + " Dashed lines are least-squares fits on log-log axes.")
        return None if bench is None else bench.results
    ago = max(0, round((time.time() - done.when) / 60))
    st.caption(
        f"Measured {'just now' if ago == 0 else f'{ago} min ago'} on this server's "
        f"{done.results['provider']}, once for every session (press **Measure again** to "
        "repeat); other sessions running at the same time make the numbers noisier. "
        "Dashed lines are least-squares fits on log-log axes."
    )
    return done.results


def page() -> None:
    """Render the complexity lesson."""
    st.title("Complexity, measured live")
    st.markdown(
        "Softmax attention compares every token with every earlier token: a T × T matrix, "
        f"so **its attention** costs **{COSTS['softmax_time']}** time and "
        f"**{COSTS['softmax_memory']}** memory. Linear attention keeps a running sum "
        f"S = Σ φ(k) vᵀ instead: **{COSTS['linear_time']}** time and "
        f"**{COSTS['linear_memory']}** memory, linear in T, and generating a token costs "
        "the same at every length. The rest of a model (embeddings, MLPs, the output layer) costs ∝ T "
        "in both; in these small models it outweighs the attention matrix at short lengths, "
        "so softmax's measured slope starts near 1 and climbs towards 2 as T grows: look at "
        "the longest lengths. The page opens with the bench's measurements; press **Measure** "
        "to time the shipped softmax and linear models on this server now."
    )
    c1, c2 = st.columns(2)
    max_T = int(c1.select_slider("Longest sequence T", MAX_T, value=2048, key="cx_max_T"))
    n_new = int(c2.select_slider("Tokens to generate", GEN_TOKENS, value=128, key="cx_new"))
    results = _results(max_T, n_new)
    if results is None:
        st.info("Nothing measured yet: press **Measure**.", icon=":material/timer:")
        return
    st.header("Time and memory against sequence length (fast graphs)")
    sc = results["scaling"]
    left, right = st.columns(2)
    with left:
        figures.plot(vc.scaling_time(sc), key="cx_time")
    with right:
        _memory(sc)
    _scaling_text(sc)
    _check_complexity(sc)
    st.header("Generation speed as the sequence grows")
    if "generation" in results:
        gen = results["generation"]
        left, right = st.columns(2)
        with left:
            figures.plot(vc.generation_speed(gen), key="cx_gen")
        with right:
            figures.plot(
                vc.carried_memory(carried(gen["n_new"] + gen["prompt_tokens"])), key="cx_kv"
            )
        _generation_text(gen)
    else:
        say("warning", f"Generation comparison unavailable: {results['generation_missing']}.")
