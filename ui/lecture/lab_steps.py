"""The lecture step after the induction head: test it, knock it out. The head the
attention pattern names is ablated in the lab graph (``inference/lab.py``) and the loss on
the second copy of the induction probe is read before and after; beside it every induction
head ablated together (a model can hold several that each suffice), a head drawn at random,
and every head's own ablation (the importance grid)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from inference import lab
from inference.history import CURVES
from ui import lab_loaders, loaders, presenter, training_view
from ui.figures import plot
from ui.lecture.step import Deeper, state
from ui.notices import say
from ui.selection import Selection
from viz import lab as figs
from viz.history import history_curves

RANDOM_SEED = 7  # the "random head" is drawn with this seed, never picked by its effect
INDUCTION_THRESHOLD = 0.4  # an induction head's score (the Head statistics probe), as the
# training history's phase change


def chosen_heads(scores: np.ndarray) -> tuple[tuple[int, int], list, tuple[int, int]]:
    """(the head of the highest induction score, every head scoring at least
    :data:`INDUCTION_THRESHOLD` (the best among them), a head drawn at random among the
    rest: the control)."""
    L, H = scores.shape
    best = divmod(int(np.nanargmax(scores)), H)
    team = [divmod(i, H) for i in range(L * H) if scores.flat[i] >= INDUCTION_THRESHOLD]
    team = team if best in team else [best, *team]
    others = [divmod(i, H) for i in range(L * H) if divmod(i, H) not in team]
    others = others or [divmod(i, H) for i in range(L * H) if divmod(i, H) != best]
    return best, team, others[np.random.default_rng(RANDOM_SEED).integers(len(others))]


def knock_out(sel: Selection) -> Deeper:
    """The loss on the probe's second copy with the induction head ablated, with every
    induction head ablated together, with a random head ablated, and every head's grid
    (mean-ablation)."""
    model = sel.model
    if not model.has_lab:
        say("info", "This model has no lab graph: no ablation here.")
        return Deeper("visualizer", "The ablation view", state(sel, view="ablate"))
    best, team, other = chosen_heads(loaders.get_induction(sel.name))
    probe = lab_loaders.probe_ids(model)
    period, means = len(probe) // 2, lab_loaders.get_means(sel.name)
    copy = lab_loaders.second_copy(period)
    grid = lab_loaders.importance(sel.name, probe, "mean", copy)  # (L, H)
    together = lab.ablate(model, probe, team, "mean", means).losses[:, copy].mean(axis=1)  # (2,)
    base = float(together[0])
    rank = int((grid > grid[best]).sum()) + 1
    cols = st.columns(4)
    cols[0].metric("Loss on the second copy", f"{base:.2f} nats")
    for col, (layer, head), what in ((cols[1], best, "the best induction head"),
                                     (cols[3], other, "a random head")):  # fmt: skip
        col.metric(f"L{layer} H{head} ablated ({what})", f"{base + grid[layer, head]:.2f} nats",
                   f"{grid[layer, head]:+.2f}", delta_color="inverse")  # fmt: skip
    cols[2].metric(f"All {len(team)} induction heads ablated", f"{together[1]:.2f} nats",
                   f"{together[1] - base:+.2f}", delta_color="inverse")  # fmt: skip
    with presenter.above_fold(400):
        plot(figs.head_grid(grid, "Loss increase on the second copy, each head mean-ablated",
                            "Δ loss (nats)", [best, other]), key="lecture_knockout")  # fmt: skip
    names = ", ".join(f"L{layer} H{head}" for layer, head in team)
    st.caption(f"The induction head L{best[0]} H{best[1]} ranks {rank} of {grid.size} heads by "
               f"the loss it costs when ablated alone. The induction heads (score ≥ "
               f"{INDUCTION_THRESHOLD}): {names}, ablated together. L{other[0]} H{other[1]} was "
               f"drawn at random among the others (seed {RANDOM_SEED}). The probe: {period} "
               "random words, then the same words again; mean-ablation puts each head's mean "
               "output over validation text in place of its own.")  # fmt: skip
    text = " ".join(model.tokenizer.decode([i]) for i in probe)
    params = state(sel, view="ablate", text=text, ablate=f"{best[0]}.{best[1]}", mode="mean")
    return Deeper("visualizer", "This ablation in the visualizer", params)


def watch_form(sel: Selection) -> Deeper:
    """The training history (``ui.training_view``): the best prefix-matching score and the
    in-context learning score of the three models against the step, each phase change
    marked, and the softmax model's best induction head at the slider's checkpoint."""
    loaded = training_view.shipped_history()
    if loaded is None:
        say("info", "No training history in the models folder: `make models` writes it.")
        return Deeper("visualizer", "The Training history view", state(sel, view="training"))
    header, models = loaded
    shown = {k: CURVES[k] for k in ("best_prefix_matching", "icl_score")}
    with presenter.above_fold(360):
        plot(history_curves(training_view.curve_fields(models), shown, header["phase_threshold"], height=360),
             key="lecture_history")  # fmt: skip
    step = training_view.training_options(sel)["step"]
    layer, head = training_view.best_head(next(iter(models.values())))
    training_view.heads_at(sel.at(layer, head), models, step, pick_hint=False)
    params = state(sel.at(layer, head), view="training", history_step=step)
    return Deeper("visualizer", "The Training history view", params)
