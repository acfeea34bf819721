"""View 2: two models on the same sentence, the same layer and head, side by side: the
selected model (A) and the model picked under "Beside" (B): another shipped model, or this
session's other upload, with the difference B − A of the chosen head when the two have
the same layers, heads and tokens (two checkpoints of one run)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from inference import view_specs as figs
from ui import click, loaders, numbers, presenter, specs
from ui.figures import plot
from ui.selection import Selection
from ui.text import plain

# Two separately trained models: head h of one has no reason to do what head h of the
# other does (a head's index is an accident of initialization).
NOT_THE_SAME_HEAD = (
    "The two models were trained separately: their heads do not correspond, so the same "
    "layer and head number is just a position to compare, not the same head."
)
# Two uploads: often two checkpoints of one run, where head h is the same head, trained on.
CHECKPOINTS = (
    "If the two are checkpoints of one training run, the same layer and head number is "
    "the same head at two points of its training; if not, it is just a position to compare."
)
SHIPPED_APART = "No difference drawn: the shipped models were trained separately."


# Which shipped model stands beside each by default: the one it is usually taught against.
PARTNER = {"softmax": "linear", "linear": "softmax", "delta": "linear"}


def compare_options(sel: Selection) -> dict:
    """The model shown beside the selected one: any other shipped model or this session's
    other upload (bound to the URL as ``vs``). Its default is the other upload beside an
    upload, else :data:`PARTNER` of the selected model's kind."""
    kind = sel.model.config.attention
    uploads = [k for k in loaders.UPLOAD_SLOTS if loaders.uploaded(k) is not None]
    choices = [k for k in [*loaders.SHIPPED_KINDS, *uploads] if k != sel.name]
    default = PARTNER.get(kind, choices[0])
    if default not in choices:  # an upload of a shipped kind: the shipped twin
        default = choices[0]
    if sel.name in loaders.UPLOAD_SLOTS and len(uploads) == 2:  # the session's other upload
        default = next(k for k in uploads if k != sel.name)
    # a link's ?vs= on the first run, then the control's own value; the default when it
    # names no other model (e.g. the model just picked in the sidebar)
    current = st.session_state.get("vs", st.query_params.get("vs"))
    st.session_state["vs"] = current if current in choices else default
    other = st.selectbox("Beside", choices, key="vs", format_func=_title, bind="query-params")
    return {"other": other}


def compare_view(sel: Selection) -> None:
    """View 2: two models on the same sentence, same layer and head: the selected model
    (A: shipped, served or uploaded) beside the model picked under "Beside" (B), then
    B − A of that head (:func:`difference`)."""
    other = sel.options["other"]
    pair = [(sel.name, sel.result), (other, loaders.get_analysis(other, sel.text))]
    both_shipped = sel.name in loaders.SHIPPED_KINDS and other in loaders.SHIPPED_KINDS
    caption = (
        f"A: {plain(_title(sel.name))} ({sel.model.config.attention} attention) beside B: "
        f"{plain(_title(other))} on the same sentence, at the same layer and head number "
        "(or the nearest one the model has). Each model splits the sentence with its own "
        f"tokenizer. {NOT_THE_SAME_HEAD if both_shipped else CHECKPOINTS}"
    )
    wide = not all(figs.side_by_side(result.T) for _, result in pair)
    places = [st.container() for _ in pair] if wide else st.columns(2)
    for col, letter, (name, result) in zip(places, "AB", pair, strict=True):
        cfg = loaders.get_model(name).config
        lay, hd = min(sel.layer, cfg.n_layer - 1), min(sel.head, cfg.n_head - 1)
        probs = result.probs[-1]
        best = int(np.argmax(probs))
        title = plain(_title(name))
        with col:
            if not presenter.is_on():  # presenting, the figure's title names model and head
                st.markdown(
                    f"**{letter}: {title}** ({cfg.attention} attention), layer {lay}, head {hd}"
                )
            fig, key = specs.shown(figs.compare, name, result, lay, hd), f"cmp_{name}"
            plot(fig, key=key, on_select=click.on_click(key))  # a click picks the query
            weights = result.outputs["attn"][lay, hd]  # (T, T), as drawn
            numbers.show(weights, result.display_tokens, f"{title}: attention weights", key)
            token = plain(loaders.get_vocab(name)[best])
            st.markdown(f"Next token: **{token}** ({probs[best]:.1%})")
    if not both_shipped:
        difference(sel, pair[0][1], pair[1][1])
    with presenter.notes():  # under the figures: both heatmaps on the first screen (#44)
        st.caption(caption + (f" {SHIPPED_APART}" if both_shipped else ""))


def difference(sel: Selection, a, b) -> None:
    """B − A of the chosen head's attention weights (``a``, ``b``: the two analyses) with
    its numbers, or one line saying why there is none (``figs.no_difference``)."""
    why = figs.no_difference(a, b)
    if why is not None:
        st.caption(why)
        return
    title = f"B − A, layer {sel.layer}, head {sel.head}"
    plot(figs.difference(a, b, sel.layer, sel.head, title), key="cmp_diff")
    diff = b.outputs["attn"][sel.layer, sel.head] - a.outputs["attn"][sel.layer, sel.head]
    numbers.show(diff, a.display_tokens, "B − A: attention weights", "cmp_diff")  # (T, T)


def _title(name: str) -> str:
    """How the compare view names a model: "Your model" / "Your second model" (uploads),
    "<key> (served)", "Shipped <kind> model"."""
    if name == "upload":
        return "Your model"
    if name == "upload2":
        return "Your second model"
    return f"Shipped {name} model" if name in loaders.SHIPPED_KINDS else f"{name} (served)"
