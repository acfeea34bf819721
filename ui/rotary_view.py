"""The positional view of a rotary model (RoPE): nothing is added to the embedding, so
the view shows how each dimension pair turns and, from the model's own q and k, that a
query and a key's score depends on their offset alone."""

from __future__ import annotations

import numpy as np
import streamlit as st

from inference import rotary
from inference.text_input import visible
from ui import downloads
from ui.figures import plot
from ui.selection import Selection
from viz import rotary as vr

START = (0, 37)  # two start positions the curve is measured at: equal if only the offset counts


def rotary_view(sel: Selection) -> None:
    """RoPE's wavelengths and the offset curve of the sidebar's layer and head."""
    cfg, result = sel.model.config, sel.result
    d_rot = cfg.d_rotary
    st.caption(
        f"This model adds **no** positional vector: it uses **rotary positions** (RoPE, Su "
        f"et al. 2021). Before the dot product each head's query and key are turned by "
        f"their position: dimension pair i turns by θᵢ = {cfg.rope_theta:g}^(−2i/{d_rot}) "
        f"radians per token"
        + (f" (positions divided by {cfg.rope_scale:g})" if cfg.rope_scale != 1 else "")
        + (
            f"; {d_rot} of the head's {cfg.d_head} dimensions turn, the rest carry content only"
            if d_rot < cfg.d_head
            else ""
        )  # fmt: skip
        + ". Turning q by m and k by n leaves the angle m − n: the score sees the offset."
    )
    plot(vr.wavelength_bars(rotary.wavelengths(d_rot, cfg.rope_theta, cfg.rope_scale),
                            cfg.context_length), key="rope_waves")  # fmt: skip
    out, T = result.outputs, result.T
    if T < 2:
        st.info("Type at least two tokens to see a query and a key by offset.")
        return
    tokens = [f"{i}: {visible(t)}" for i, t in enumerate(result.tokens)]
    c1, c2 = st.columns(2)
    qi = c1.selectbox("Query", range(T), index=T - 1, format_func=tokens.__getitem__,
                      key="rope_query")  # fmt: skip
    kj = c2.selectbox("Key", range(qi + 1), index=0, format_func=tokens.__getitem__,
                      key="rope_key")  # fmt: skip
    layer, head = sel.layer, sel.head
    args = (d_rot, cfg.rope_theta, cfg.rope_scale)
    q = rotary.contents(out["q"][layer, head], *args)[qi]  # (D,) the query's content
    k = rotary.contents(out["k"][layer, head], *args)[kj]  # (D,) the key's content
    offsets = np.arange(0, max(cfg.context_length // 2, T))  # (n,)
    curves = [rotary.offset_scores(q, k, offsets, s, *args) for s in START]  # 2 x (n,)
    own = float(out["q"][layer, head, qi] @ out["k"][layer, head, kj]) / np.sqrt(cfg.d_head)
    plot(vr.offset_curve(offsets, curves[0], qi - kj, own, visible(result.tokens[qi]),
                         visible(result.tokens[kj])), key="rope_offsets")  # fmt: skip
    about = downloads.about(sel.name, result, layer, head, "positional", query=qi, key=kj,
                            starts=list(START),
                            axes={"wavelengths": ["pair"], "offsets": ["offset"],
                                  "offset_scores": ["start", "offset"],
                                  "query_content": ["d_head"], "key_content": ["d_head"]})  # fmt: skip
    downloads.arrays("rope", {"wavelengths": rotary.wavelengths(*args), "offsets": offsets,
                              "offset_scores": np.stack(curves), "query_content": q,
                              "key_content": k}, None, layer, head, manifest=about)  # fmt: skip
    moved = float(np.abs(curves[0] - curves[1]).max())
    at_offset = abs(float(curves[0][qi - kj]) - own)
    st.caption(
        f"L{layer} H{head}. The query's and the key's contents are the model's own q and k "
        f"turned back to position 0. The curve puts the key at position {START[0]} and the "
        f"query {START[0]}, {START[0] + 1}, … tokens later; put at position {START[1]} "
        f"instead, the curve moves by at most **{moved:.1e}** (only the offset counts). At "
        f"the pair's offset in your sentence ({qi - kj}) the curve and the model's own score "
        f"differ by **{at_offset:.1e}**."
    )
