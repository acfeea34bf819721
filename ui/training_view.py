"""The Training history view (issue #46): how the three shipped models learnt, checkpoint
by checkpoint. The measures of every kept step against the step with each model's phase
change marked (``viz.history``), and a step slider that redraws the sidebar's head on the
sentence at that checkpoint, the three models side by side (``inference.history``: each
checkpoint's own attention graph). The shipped three, whichever model the sidebar holds:
they were trained with one recipe (``training/recipe.py``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import streamlit as st

from inference import history
from inference.history import CURVES, HistoryGraph, ModelHistory
from ui import downloads, link, loaders, presenter
from ui.figures import plot
from ui.notices import say
from ui.selection import Selection
from viz import fit
from viz.attention import attention_heatmap
from viz.history import history_curves

STEP_KEY = "history_step"  # the slider's widget key and URL parameter
HEATMAP_FOLD_PX = 420  # presenting: the slider and the three heads above a 1280x720 fold


@st.cache_resource(show_spinner=False)
def shipped_history() -> tuple[dict, dict[str, ModelHistory]] | None:
    """``(header, kind -> ModelHistory)`` of the shipped models, or None when the models
    folder has no history (``inference.history.load_history``)."""
    try:
        return history.load_history(loaders.models_dir() / "history")
    except FileNotFoundError:
        return None


@st.cache_resource(show_spinner=False, max_entries=32)
def _graph(path: str) -> HistoryGraph:
    return HistoryGraph(Path(path))


@st.cache_data(show_spinner=False, max_entries=256)
def checkpoint_attention(kind: str, step: int, ids: tuple[int, ...]) -> np.ndarray:
    """(L, H, T, T) attention of shipped model ``kind`` at training step ``step`` on ``ids``."""
    _, models = shipped_history()
    return _graph(str(models[kind].graph_path(step))).attention(list(ids))


def best_head(h: ModelHistory) -> tuple[int, int]:
    """The head of the highest prefix-matching score at the last kept step."""
    last = h.prefix_matching[-1]  # (L, H)
    return divmod(int(np.argmax(last)), last.shape[1])


def sentence(sel: Selection) -> tuple[list[int], list[str]]:
    """The sidebar's sentence as the shipped tokenizer reads it (the three share one),
    cut to the shipped context: ``(ids (T,), display tokens (T,))``. A shipped model's
    analysis is the page's own; for another model the shipped tokenizer's is made."""
    shipped = sel.name in loaders.SHIPPED_KINDS
    result = sel.result if shipped else loaders.get_analysis(loaders.SHIPPED_KINDS[0], sel.text)
    T = loaders.shipped_model(loaders.SHIPPED_KINDS[0]).config.context_length
    return list(result.ids)[:T], list(result.display_tokens)[:T]


def training_options(sel: Selection) -> dict:
    """The step slider over the checkpoints with an attention graph (the same for the
    three), at the first phase change by default, else the last step."""
    loaded = shipped_history()
    if loaded is None:
        return {}
    _, models = loaded
    steps = next(iter(models.values())).graph_steps
    phases = [h.phase_change_step for h in models.values() if h.phase_change_step in steps]
    default = phases[0] if phases else steps[-1]
    _check_link(steps)
    step = st.select_slider("Training step (checkpoint)", steps, value=default, key=STEP_KEY,
                            bind="query-params", format_func=lambda s: f"{s:,}")  # fmt: skip
    return {"step": step}


def _check_link(steps: list[int]) -> None:
    """A link's ``history_step`` that is not a kept step with a graph: dropped from the URL
    with one notice here (the view draws after the page's notices), before the bound
    slider is drawn; the slider then opens on its default."""
    raw = st.query_params.get(STEP_KEY)
    if raw is None or STEP_KEY in st.session_state or raw in {str(s) for s in steps}:
        return
    try:
        del st.query_params[STEP_KEY]
    except st.errors.StreamlitAPIException:  # already bound: the widget drops it itself
        pass
    shown = ", ".join(str(s) for s in steps)
    say("warning", f"Ignored the link's {STEP_KEY}={link.quoted(raw)}: not a kept step ({shown}).",
        icon=":material/link_off:")  # fmt: skip


def training_view(sel: Selection) -> None:
    """The curves, then the chosen head at the slider's checkpoint for the three models."""
    loaded = shipped_history()
    if loaded is None:
        say("info", "No training history in the models folder: `make models` writes it.")
        return
    header, models = loaded
    if sel.name not in loaders.SHIPPED_KINDS:
        say("info", "The training history is of the three shipped models; the sidebar's "
            "model has none.")  # fmt: skip
    plot(history_curves(curve_fields(models), CURVES,
                        header["phase_threshold"]), key="history_curves")  # fmt: skip
    _curves_caption(header, models)
    step = sel.options.get("step", next(iter(models.values())).steps[-1])
    heads_at(sel, models, step)


def curve_fields(models: dict[str, ModelHistory]) -> dict[str, dict]:
    """What ``viz.history.history_curves`` draws of each model's history."""
    return {k: {"steps": h.steps, "curves": h.curves, "phase_change_step": h.phase_change_step}
            for k, h in models.items()}  # fmt: skip


def _curves_caption(header: dict, models: dict[str, ModelHistory]) -> None:
    r, threshold = header["recipe"], header["phase_threshold"]
    phases = "; ".join(
        f"{k}: the best prefix-matching score first reaches {threshold} at step "
        f"{h.phase_change_step:,}" if h.phase_change_step is not None
        else f"{k}: no head reaches {threshold}"
        for k, h in models.items()
    )  # fmt: skip
    with presenter.notes():
        st.caption(
            f"One recipe for the three: {r['steps']:,} steps, batch {r['batch_size']}, peak "
            f"learning rate {r['lr']}, seed {r['seed']}, {r['recall_share']:.0%} of each "
            f"batch's rows synthetic recall and repeat rows; {r['schedule']}. Measured at "
            f"{len(next(iter(models.values())).steps)} kept steps (log-spaced): validation "
            "loss (nats a token, held-out lines); in-context learning score, the loss on the "
            "first copy of 24 random words minus the loss on the second (nats; Olsson et al. "
            "2022); the best head's prefix-matching score (attention from a repeated token "
            "to the token after its first copy); top-token recall of n = "
            f"{header['recall_n']} key–value pairs. Dashed: {phases}."
        )


def heads_at(
    sel: Selection, models: dict[str, ModelHistory], step: int, pick_hint: bool = True
) -> None:
    """The sidebar's head at checkpoint ``step``, one heatmap per model, and the arrays;
    ``pick_hint``: say that the sidebar picks the head (not where the head is fixed)."""
    ids, tokens = sentence(sel)
    layer, head = _head(sel, models)
    st.markdown(f"**L{layer} H{head} at step {step:,}** on the sentence "
                f"({len(ids)} tokens)" + ("; pick another head in the sidebar." if pick_hint
                                          else "."))  # fmt: skip
    attn = {k: checkpoint_attention(k, step, tuple(ids)) for k in models}  # (L, H, T, T)
    with presenter.above_fold(HEATMAP_FOLD_PX):
        for col, (kind, a) in zip(st.columns(len(attn)), attn.items(), strict=True):
            score = models[kind].prefix_matching[models[kind].steps.index(step), layer, head]
            with col:
                plot(attention_heatmap(a[layer, head], tokens,
                                       f"{kind} · step {step:,}<br>prefix-matching {score:.2f}",
                                       colorbar_title="weight", width_px=fit.HALF_1280_PX),
                     key=f"history_{kind}")  # fmt: skip
    best = {k: best_head(h) for k, h in models.items()}
    with presenter.notes():
        st.caption("The best induction head at the last step: " + ", ".join(
            f"{k} L{b[0]} H{b[1]}" for k, b in best.items()) + ". Each heatmap is that "
            "checkpoint's own attention graph (its weights kept in float16).")  # fmt: skip
    named = {f"{k}_attn": a for k, a in attn.items()}
    named["ids"] = np.asarray(ids)
    manifest = {"step": step, "layer": layer, "head": head, "text": sel.text,
                "axes": {**{n: ("layer", "head", "query", "key") for n in named if n != "ids"},
                         "ids": ("token",)}}  # fmt: skip
    downloads.arrays(f"history_step{step}", named, tokens, layer, head, manifest)


def _head(sel: Selection, models: dict[str, ModelHistory]) -> tuple[int, int]:
    """The sidebar's layer and head, or the softmax model's best induction head when the
    sidebar's model has other shapes than the shipped ones."""
    L, H = next(iter(models.values())).prefix_matching.shape[1:]
    if sel.layer < L and sel.head < H:
        return sel.layer, sel.head
    return best_head(next(iter(models.values())))
