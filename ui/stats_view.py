"""The head statistics view (view 8): per-head scores with automatic labels, and the whole
model's behavioural induction score."""

from __future__ import annotations

import streamlit as st

from inference import view_specs as figs
from ui import loaders, presenter, specs
from ui.notices import say
from ui.selection import Selection


def stats_view(sel: Selection) -> None:
    """View 7: per-head statistics with automatic labels."""
    table = specs.table(figs.head_stats, sel.name, sel.result)
    if table is None:
        say("info", "Type at least two tokens to score the heads.")
        return
    with presenter.notes():
        st.caption(
            "Scores on this sentence: previous_token and first_token are mean attention weights "
            "(0–1), distance is the mean query–key distance in tokens, entropy is in bits. "
            "induction is measured apart from your sentence, as the model card measures it: on "
            "24 blocks of 24 random words, each repeated twice."
            + (
                " The delta model's implied weights are signed, so the columns from your "
                "sentence are taken on |weight| ÷ the row's sum of |weight|: each earlier "
                "token's share of the read-out in magnitude."
                if sel.model.config.attention == "delta"
                else ""
            )
        )
    # every head in view, no inner scroll (L2 H2/H3 were hidden under it); a model of
    # many heads (GPT-2 small: 144) scrolls inside a screen-tall table
    presenter.table(table, height="content" if table.num_rows <= 48 else 900)
    _behavioural(sel)


def _behavioural(sel: Selection) -> None:
    """The whole model's behavioural induction score beside the heads' attention-based one."""
    score = loaders.get_behavioural(sel.name)
    if score is None:
        return
    st.metric(
        "Behavioural induction score (whole model, nats)",
        f"{score['score']:.2f}",
        help="Olsson et al. 2022: the mean next-token loss on the second copy of "
        f"{score['sequences']} blocks of {score['period']} random words, each repeated twice, "
        "subtracted from the loss on the first copy. It reads only the predictions, so it "
        "also credits a model that copies through its state without an induction stripe "
        "(the delta model).",
    )
    with presenter.notes():
        st.caption(
            f"Loss on the first copy {score['first_copy_loss']:.2f} nats a token, on the second "
            f"{score['second_copy_loss']:.2f}: the model copies when the second is lower. "
            "The induction column above reads attention instead, head by head."
        )
