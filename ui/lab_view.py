"""The Ablation view: knock out heads and see the loss and predictions change, and the
head importance grid (every head ablated alone) on the sentence and on the induction probe.

URL state: ``?view=ablate&ablate=1.3,0.2&mode=mean`` (heads as layer.head). A click on a
cell of either grid adds that head to the ablated ones, or takes it out.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from inference import lab
from inference.text_input import visible
from ui import chart, downloads, lab_loaders, loaders, presenter
from ui.figures import plot
from ui.notices import say
from ui.selection import Selection
from viz import lab as figs

HEADS, MODE, URL_HEADS = "ablate_heads", "mode", "ablate"
NO_LAB = ("This model has no hand on its heads here (an ONNX upload runs its graphs in an "
          "isolated worker, and a graph this app did not export has no such inputs): "
          "ablation, patching and the logit lens need a checkpoint this app converts (ours, "
          "nanoGPT, a GPT-2 folder) or a shipped model.")  # fmt: skip
RUNS = "run (0 as trained, 1 ablated)"
ABLATE_AXES = {"losses": (RUNS, "position (nats predicting the next token)"),
               "top": (RUNS, "position (top next-token id)"), "top_prob": (RUNS, "position"),
               "importance": ("layer", "head"), "importance_probe": ("layer", "head")}  # fmt: skip
MODE_HELP = (
    "zero: the head's output is replaced by zeros. mean: by its mean output over "
    "4,096 tokens of validation text. The two can disagree about which head matters."
)


def has_lab(sel: Selection) -> bool:
    """True when the model's lab graph is open (an upload's is exported the first time a
    lab view asks, under a spinner); else the one-line notice, or the export's one-line
    error."""
    if not getattr(sel.model, "has_lab", False):
        say("info", NO_LAB, icon=":material/science:")
        return False
    if not sel.model.lab_graph.opened:
        try:
            with st.spinner("Exporting this model's lab graph (once, a few seconds)…"):
                sel.model.lab_graph.session()
        except Exception as exc:  # noqa: BLE001 - an upload's export: its one line
            say("error", f"The lab graph could not be made: {exc}", icon=":material/error:")
            return False
    return True


def parse_heads(raw: str, n_layer: int, n_head: int) -> tuple[list[str], list[str]]:
    """A link's ``ablate`` value ("1.3,0.2") -> (valid head keys "1.3", refused parts)."""
    kept, refused = [], []
    for part in (p.strip() for p in raw.split(",") if p.strip()):
        layer, dot, head = part.partition(".")
        ok = dot and layer.isascii() and layer.isdecimal() and head.isascii() and head.isdecimal()
        if ok and int(layer) < n_layer and int(head) < n_head:
            kept.append(f"{int(layer)}.{int(head)}")
        else:
            refused.append(part)
    return list(dict.fromkeys(kept)), refused


def _toggle(chart_key: str, n_head: int):
    def clicked() -> None:
        cell = chart.clicked(st.session_state.get(chart_key))
        if cell is None:
            return
        key = f"{cell // n_head}.{cell % n_head}"
        heads = list(st.session_state.get(HEADS, []))
        st.session_state[HEADS] = [h for h in heads if h != key] if key in heads else heads + [key]

    return clicked


def ablate_options(sel: Selection) -> dict:
    """The heads to ablate (bound to the URL as ``ablate``) and the mode (``mode``)."""
    if not getattr(sel.model, "has_lab", False):
        return {}
    cfg = sel.model.config
    options = [f"{layer}.{head}" for layer in range(cfg.n_layer) for head in range(cfg.n_head)]
    if HEADS not in st.session_state:  # a link's heads, on the session's first visit
        kept, refused = parse_heads(st.query_params.get(URL_HEADS, ""), cfg.n_layer, cfg.n_head)
        st.session_state[HEADS] = kept
        if refused:
            say(
                "warning",
                f"Ignored the link's ablate={', '.join(refused)[:80]}: heads are "
                f"layer.head, with layers 0–{cfg.n_layer - 1} and heads 0–{cfg.n_head - 1}.",
            )
    st.session_state[HEADS] = [h for h in st.session_state[HEADS] if h in options]
    left, right = st.columns([3, 1])
    heads = left.multiselect("Heads to ablate (or click the grids below)", options, key=HEADS,
                             format_func=lambda k: "L{} H{}".format(*k.split(".")))  # fmt: skip
    mode = right.segmented_control("Ablate by", lab.MODES, default="zero", key=MODE,
                                   required=True, bind="query-params", help=MODE_HELP)  # fmt: skip
    if heads:
        st.query_params[URL_HEADS] = ",".join(heads)
    elif URL_HEADS in st.query_params:
        del st.query_params[URL_HEADS]
    pairs = [tuple(int(x) for x in h.split(".")) for h in heads]
    return {"heads": pairs, "mode": mode or "zero"}


def ablate_view(sel: Selection) -> None:
    """Before and after ablating the chosen heads, and the importance grids."""
    if not has_lab(sel):
        return
    result, model = sel.result, sel.model
    heads, mode = sel.options["heads"], sel.options["mode"]
    means = lab_loaders.get_means(sel.name) if mode == "mean" else None
    if result.T < 2:
        say("info", "Type at least two tokens: the loss is of predicting the next one.")
        return
    if line := lab.too_long(model.config, result.T):
        say("warning", line)
        return
    named = {}
    if heads:
        ab = lab.ablate(model, result.ids, heads, mode, means)
        _before_after(sel, ab)
        named = {"losses": ab.losses, "top": ab.top, "top_prob": ab.top_prob}
    else:
        say("info", "Pick heads to ablate above, or click a cell of a grid below.",
            icon=":material/touch_app:")  # fmt: skip
    named |= _grids(sel, heads, mode)
    about = downloads.about(sel.name, result, sel.layer, sel.head, "ablate", axes=ABLATE_AXES,
                            ablated=[list(h) for h in heads], mode=mode)  # fmt: skip
    downloads.arrays("ablation", named, None, manifest=about)


def _before_after(sel: Selection, ab: lab.Ablation) -> None:
    tokens = [visible(t) for t in sel.result.tokens]
    named = ", ".join(f"L{layer} H{head}" for layer, head in ab.heads)
    before, after = ab.mean_losses
    cols = st.columns(3)
    cols[0].metric("Loss on the sentence", f"{before:.3f} nats")
    cols[1].metric(f"{ab.mode}-ablated {named}", f"{after:.3f} nats", f"{after - before:+.3f}",
                   delta_color="inverse")  # fmt: skip
    cols[2].metric(
        "Top predictions changed", f"{int((ab.top[0] != ab.top[1]).sum())} of {len(tokens)}"
    )
    with presenter.above_fold(420):
        plot(
            figs.loss_lines(ab.losses, tokens, ("as trained", f"{ab.mode}-ablated")),
            key="ablate_loss",
        )
    vocab = loaders.get_vocab(sel.name)
    rows = [{"position": f"{i}: {tokens[i]}", "next": tokens[i + 1] if i + 1 < len(tokens) else "",
             "top before": vocab[int(ab.top[0, i])], "p before": float(ab.top_prob[0, i]),
             "top after": vocab[int(ab.top[1, i])], "p after": float(ab.top_prob[1, i])}
            for i in range(len(tokens))]  # fmt: skip
    st.caption("The top next-token prediction at every position, before and after.")
    presenter.table(pd.DataFrame(rows), height="content" if len(rows) <= 48 else 900,
                    column_config={c: st.column_config.NumberColumn(format="percent")
                                   for c in ("p before", "p after")})  # fmt: skip


def _grids(sel: Selection, heads, mode: str) -> dict[str, np.ndarray]:
    model, ids, H = sel.model, sel.result.ids, sel.model.config.n_head
    probe = lab_loaders.probe_ids(model)
    period = len(probe) // 2
    grids = [("ablate_grid", lab_loaders.importance(sel.name, ids, mode),
              "On your sentence: loss increase when each head alone is ablated"),
             ("ablate_probe", lab_loaders.importance(sel.name, probe, mode,
                                                     lab_loaders.second_copy(period)),
              f"On the induction probe ({period} random words, twice): loss increase on the "
              "second copy")]  # fmt: skip
    st.subheader(f"Head importance ({mode}-ablation)")
    st.caption("Each cell: the mean next-token loss (nats) with that head alone ablated, "
               "minus the loss with none. Red: the model needs the head; blue: it does "
               "better without it. Click a cell to ablate that head above.")  # fmt: skip
    cols = st.columns(2) if not presenter.is_on() else [st.container(), st.container()]
    for col, (key, grid, title) in zip(cols, grids, strict=True):
        with col:
            plot(figs.head_grid(grid, title, "Δ loss (nats)", heads), key=key,
                 on_select=_toggle(key, H))  # fmt: skip
    top = np.argsort(grids[1][1], axis=None)[::-1][:3]
    named = ", ".join(f"L{i // H} H{i % H} ({grids[1][1].flat[i]:+.2f})" for i in top)
    st.caption(f"On the induction probe the three heads that raise the loss most: {named}.")
    return {"importance": grids[0][1], "importance_probe": grids[1][1]}  # (L, H) each
