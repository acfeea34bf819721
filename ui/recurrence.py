"""The causal mask view: the masked scores beside the recurrent state (linear attention's
S_i and z_i, the delta rule's own step). The Predictions view is ``ui/predictions.py``."""

from __future__ import annotations

import streamlit as st

from inference import view_specs as figs
from inference.analysis import Analysis, has_head_scores
from inference.text_input import visible
from ui import click, delta_view, downloads, loaders, presenter, specs
from ui.figures import Encoded, plot
from ui.notices import say
from ui.selection import Selection
from ui.text import plain
from viz import mask as vm

MASK_FOLD_PX = 550  # the panels start 160 px down when presenting


def _linear(sel: Selection) -> tuple[str, Analysis]:
    """The model the recurrent view runs and its analysis with the recurrent form: the
    selected model, or the shipped linear model on the same sentence."""
    here = loaders.get_recurrent(sel.name, sel.result)
    if here.recurrent is not None:
        return sel.name, here
    return "linear", loaders.get_recurrent("linear", loaders.get_analysis("linear", sel.text))


def step_slider(lin: Analysis) -> int:
    """The token i after which the recurrent state is shown: a slider drawn in the
    recurrent section it controls (#20 item 9: above the mask panels it read as theirs)."""
    if lin.T == 1:
        return 0
    label = "Token i: show the state after it"
    return int(st.slider(label, 0, lin.T - 1, lin.T - 1, key="rec_step", format="%d"))


MASK_NOTE = {
    "softmax": "Scores are QKᵀ/√d_head before the mask; the mask blocks keys after the query; "
    "softmax of the masked row gives the weights.",
    "linear": "Scores are φ(Q)φ(K)ᵀ with φ(x) = elu(x) + 1; masked and divided by the row sum "
    "plus ε (φ(q_i)ᵀz_i + ε) they give the implied attention matrix.",
    "delta": "Scores are QKᵀ of the unit-length q and k the delta rule uses; masked, then "
    "mixed through (I + L)⁻¹ diag(β), L = tril(diag(β)KKᵀ, −1), they give the implied "
    "matrix: what each earlier value contributes to the output after every later key "
    "erased its part. **Its entries can be negative and rows need not sum to 1** (blue: "
    "negative, red: positive).",
}


def _scores_and_mask(sel: Selection) -> None:
    """Our graphs: pre-mask scores, the causal mask, the weights."""
    kind, layer, head = sel.model.config.attention, sel.layer, sel.head
    window = sel.model.config.window_of(layer)
    note = MASK_NOTE[kind] + (
        f" **Sliding window {window}:** a query also cannot see keys {window} or more "
        "tokens back (Mistral); those are blocked like future ones."
        if window
        else ""
    )
    st.markdown(f"**{kind.capitalize()} model, layer {layer}, head {head}.** " + note)
    panels = specs.shown(figs.mask_panels, sel.name, sel.result, layer, head)
    _clickable(_outlined(panels, sel.result), sel.result)
    _arrays(sel, ("scores", "attn"))


def _clickable(panels: Encoded, result: Analysis) -> None:
    """The panels; a click on a cell picks its query (``ui.click``), outlined here."""
    tokens = tuple(result.tokens)
    with presenter.above_fold(MASK_FOLD_PX):  # presenting: whole above a 1280×720 fold
        plot(panels, key="mask_panels", on_select=click.on_click("mask_panels", tokens))


def _outlined(panels: Encoded, result: Analysis) -> Encoded:
    """The panels (kept encoded: ``ui.specs.shown``) with the selected query's row
    outlined (the attention view's Query token, or a clicked cell: ``ui.click``), when
    one is picked for this sentence: a new layout, the traces' bytes as they are."""
    query = click.chosen(tuple(result.tokens))
    if query is None or not 0 <= query < result.T:
        return panels
    st.caption(
        f"Outlined: the row of query {query} (click a cell, or pick it in the attention view)."
    )
    return panels.with_layout(lambda layout: vm.row_outlined(layout, result.T, query))


def _foreign_mask(sel: Selection) -> None:
    """A foreign ONNX graph: its mask is inside what its Softmax receives."""
    layer, head = sel.layer, sel.head
    if "masked_scores" not in sel.result.outputs:
        say(
            "info",
            f"Layer {layer}, head {head}: this graph computes its scores and mask inside "
            "ONNX's Attention operator, which returns only the probabilities; they are "
            "shown here, the scores it masked are not in the graph.",
        )
        plot(specs.shown(figs.compare, sel.name, sel.result, layer, head), key="mask_panels")
        return
    st.markdown(
        f"**Softmax model, layer {layer}, head {head}.** This graph was not made by this "
        "project, so its pre-mask scores are not known: the left panel is **what its "
        "Softmax receives, the mask included** (the graph's own −∞ or large negative "
        "number where a key is blocked; those cells are blank). The middle panel is the "
        "mask as measured: the keys the Softmax gave weight exactly 0. The right panel is "
        "the Softmax output, the attention weights."
    )
    panels = specs.shown(figs.softmax_input_panels, sel.name, sel.result, layer, head)
    _clickable(_outlined(panels, sel.result), sel.result)
    _arrays(sel, ("masked_scores", "attn"))


def _arrays(sel: Selection, names: tuple[str, ...]) -> None:
    """The panels' arrays that the analysis holds (a served model's lean analysis keeps
    no ``scores``: its panels compute the one head's from q and k)."""
    result = sel.result
    shown = {n: result.outputs[n] for n in names if n in result.outputs}
    about = downloads.about(sel.name, result, sel.layer, sel.head, "mask")
    downloads.arrays("mask", shown, result.display_tokens, sel.layer, sel.head, about)


def mask_view(sel: Selection) -> None:
    """Raw scores, the causal mask and the masked result (for a foreign ONNX graph: what
    its Softmax receives, the mask as measured, the weights); under it the recurrent
    form, stepping token by token: a delta model's "erase, then write", then (for every
    model) linear attention's additive state S_i, normalizer z_i and output y_i."""
    if has_head_scores(sel.result):  # kept, or made from q and k (a served model)
        _scores_and_mask(sel)
    else:
        _foreign_mask(sel)
    lin_name, lin = _linear(sel)  # the recurrent view needs a linear model
    i = None  # the slider is drawn under the first recurrent section's heading
    if sel.model.config.attention == "delta" and lin_name == sel.name:
        i = delta_view.section(lin, sel.layer, sel.head, lambda: step_slider(lin), sel.name)
        lin_name = "linear"
        lin = loaders.get_recurrent("linear", loaders.get_analysis("linear", sel.text))
        i = min(i, lin.T - 1)
        st.caption(
            "Beside it, the shipped linear-attention model on the same sentence: its state "
            "only adds φ(k_i)v_iᵀ, so what an earlier, similar key wrote is never taken out."
        )
    elif lin_name != sel.name:
        st.caption(_why_linear(sel.model.config.attention))
    _linear_section(sel, lin_name, lin, i)


def _why_linear(kind: str) -> str:
    why = (
        "uses softmax attention, which has no recurrence with a fixed-size state "
        "(each row is normalized by a sum of exp(qᵀk) over every earlier key, which "
        "the query changes, so there is no running sum to carry)"
        if kind == "softmax"
        else "came without a recurrent step graph"
    )
    return (
        f"The selected model {why}: the recurrent view below runs the shipped "
        "linear-attention model on the same sentence."
    )


def _linear_section(sel: Selection, lin_name: str, lin: Analysis, i: int | None) -> None:
    """Linear attention as an RNN: S_i, z_i and y_i of one head after token ``i`` (None:
    the step slider, drawn under this section's heading)."""
    cfg = loaders.get_model(lin_name).config
    lay, hd = min(sel.layer, cfg.n_layer - 1), min(sel.head, cfg.n_head - 1)
    st.subheader(f"Linear attention as an RNN (layer {lay}, head {hd})")
    st.latex(
        r"S_i = S_{i-1} + \phi(k_i)v_i^\top,\quad z_i = z_{i-1} + \phi(k_i),\quad "
        r"y_i = \frac{\phi(q_i)^\top S_i}{\phi(q_i)^\top z_i + \epsilon}"
    )
    rec = lin.recurrent
    i = step_slider(lin) if i is None else i
    st.markdown(
        f"After token {i}: **{plain(visible(lin.tokens[i]))}** — the state has the same "
        f"size, {cfg.d_head}×{cfg.d_head}, whatever i is."
    )
    c1, c2 = st.columns([3, 2])
    with c1:
        plot(specs.shown(figs.recurrent_state, lin_name, lin, lay, hd, i), key="rec_state")
    with c2:
        z = specs.shown(figs.recurrent_vector, lin_name, lin, lay, hd, i, "normalizer")
        plot(z, key="rec_z")
    c1, c2 = st.columns([3, 2])  # the output beside the check that both forms agree
    with c1:
        st.metric(
            "max |recurrent − parallel| (y, S, z and logits, all layers and heads)",
            f"{lin.recurrent_max_diff:.2e}",
        )
        st.caption(
            f"y_{i} is the head's output at token {i}, from S_{i} and z_{i} alone. "
            "Measured now: the step graph was rolled over your sentence token by token "
            "and compared with the parallel (T×T) graph."
        )
    with c2:
        plot(specs.shown(figs.recurrent_vector, lin_name, lin, lay, hd, i, "y"), key="rec_y")
    with st.expander("▶ Play S_i and z_i token by token (in your browser)"):
        plot(specs.shown(figs.recurrent_play, lin_name, lin, lay, hd), key="rec_play")
    downloads.arrays(
        "recurrent",
        {"state": rec["state"], "normalizer": rec["normalizer"], "y": rec["y"]},
        lin.display_tokens,
        lay,
        hd,
        downloads.about(lin_name, lin, lay, hd, "mask", step=i),
    )
