"""The Predictions view: the next-token distribution at a position, the top next tokens
at every position, and the generation panel."""

from __future__ import annotations

import streamlit as st

from inference import view_specs as figs
from inference.text_input import visible
from ui import downloads, presenter, specs
from ui.figures import plot
from ui.generation import generation_panel, sampled_bars, sampling_controls
from ui.selection import Selection
from ui.text import plain

# Presenting at 1280×720, the bars start 267 px down (view control, position slider,
# decoding rule): at most this tall, they end above the fold.
BARS_FOLD_PX = 440


def _percent_columns(k: int) -> dict:
    return {f"p #{r + 1}": st.column_config.NumberColumn(format="percent") for r in range(k)}


def opening_position(t: int) -> int:
    """Where the Predictions view opens: the last position whose next token is in the
    sentence (T - 2), so the bars can be read against the word that follows (#20 item
    11: after the final token, usually the full stop, there is nothing to compare with;
    on the default sentence T - 2 is "to", predicting "mary")."""
    return max(0, t - 2)


def predict_options(sel: Selection) -> dict:
    """The position whose next-token distribution is drawn, and the decoding rule
    (greedy, or temperature / top-p / top-k / seed) drawn right above the bars it
    reshapes (#44 item 12: under the table they moved bars out of view)."""
    result = sel.result
    if st.session_state.get("pred_pos", 0) >= result.T:  # a click on a longer sentence
        del st.session_state["pred_pos"]
    # a clicked query (ui.click) is in session state: then no default besides it
    opening = {} if "pred_pos" in st.session_state else {"value": opening_position(result.T)}
    pos = st.select_slider(
        "Position",
        options=list(range(result.T)),
        **opening,
        format_func=lambda i: f"{i}: {plain(visible(result.tokens[i]))}",  # renders markdown
        key="pred_pos",
    )
    return {"position": pos, "sampling": sampling_controls(sel.model.config.vocab_size)}


def predict_view(sel: Selection) -> None:
    """The next-token bars at the position as the decoding rule draws from them, the top
    next tokens at every position, and the generation panel."""
    name, result, pos = sel.name, sel.result, sel.options["position"]
    sampling = sel.options["sampling"]
    with presenter.above_fold(BARS_FOLD_PX):
        if sampling.greedy:  # the model's own distribution
            plot(specs.shown(figs.top_k, name, result, pos), key="topk")
        else:  # what the sampler draws from: temperature, top-k and top-p applied
            plot(sampled_bars(name, result, pos, sampling), key="topk")
    # the table across the page, every row in view: in a side column at 1280 px its
    # columns were cut at the right and its rows scrolled (#20 item 11)
    k = min(3, result.probs.shape[1])
    table = specs.table(figs.top_next, name, result, k)
    st.caption(f"Top {k} next tokens at every position, with their probabilities.")
    presenter.table(table, height="content" if table.num_rows <= 48 else 900,
                    column_config=_percent_columns(k), float_format="{:.2%}")  # fmt: skip
    named = {"probs": result.probs}  # (T, V)
    if "logits" in result.outputs:  # (1, T, V); a served model's lean analysis keeps none
        named["logits"] = result.outputs["logits"][0]
    about = downloads.about(name, result, sel.layer, sel.head, "predict", position=pos)
    downloads.arrays("predictions", named, result.display_tokens, manifest=about)
    generation_panel(sel, sampling)
