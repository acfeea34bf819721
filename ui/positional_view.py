"""The positional-encoding view (view 4): the model's own encoding as curves, as a matrix,
and as the similarity of positions."""

from __future__ import annotations

import streamlit as st

from inference import view_specs as figs
from ui import downloads, loaders, specs
from ui.figures import vega_lite
from ui.lacking import lacks
from ui.rotary_view import rotary_view
from ui.selection import Selection
from viz import positional as vp
from viz.positional import default_dims


def positional_options(sel: Selection) -> dict:
    """The encoding dimensions the curves show."""
    if "pos_enc" not in sel.result.outputs or sel.model.config.position_scheme == "rotary":
        return {"dims": ()}
    pe = loaders.get_pos_enc(sel.name)  # (P, C)
    sinusoidal = sel.model.config.position_scheme == "sinusoidal"
    options = list(range(pe.shape[1]))
    if "pe_dims" in st.session_state:  # kept from a wider model: drop what this one lacks
        st.session_state["pe_dims"] = [d for d in st.session_state["pe_dims"] if d < len(options)]
    else:  # the default goes in once: a widget given both a default and a state value warns
        st.session_state["pe_dims"] = default_dims(pe.shape[1])
    dims = st.multiselect(
        "Dimensions",
        options,
        format_func=lambda d: vp.dimension_name(d, sinusoidal),
        key="pe_dims",
    )
    return {"dims": tuple(dims)}


def positional_view(sel: Selection) -> None:
    """View 4: positional-encoding curves, the PE matrix and position similarity."""
    name, result = sel.name, sel.result
    if sel.model.config.position_scheme == "rotary":
        if not lacks(sel, ["q", "k"], "The rotary positions view"):
            rotary_view(sel)
        return
    if lacks(sel, ["pos_enc"], "The positional-encoding view"):
        return
    pe = loaders.get_pos_enc(name)  # (P, C): the model's own encoding over its context
    kind = (
        "sinusoidal"
        if sel.model.config.position_scheme == "sinusoidal"
        else "learned embedding (wpe)"
    )
    st.caption(
        f"This model's positional encoding is **{kind}**: one vector of d_model = "
        f"{pe.shape[1]} numbers per position, added to each token's embedding. Shown for "
        f"positions 0–{pe.shape[0] - 1}; your sentence uses positions 0–{result.T - 1}."
    )
    dims = sel.options["dims"]
    if dims:
        vega_lite(specs.get(figs.pe_curves, name, result, list(dims), result.T))
    c1, c2 = st.columns(2)
    with c1:
        vega_lite(specs.get(figs.pe_heatmap, name, result))
    with c2:
        vega_lite(specs.get(figs.pe_similarity, name, result))
    about = downloads.about(name, result, sel.layer, sel.head, "positional")
    downloads.arrays("pos_enc", {"pos_enc": pe}, None, manifest=about)
