"""The sidebar every page with a selection shares: model, sentence, layer and head,
then example sentences, the checkpoint uploader and the model card.

``app.py`` draws it before the page runs, so its widgets are the same widgets on
the visualizer and on every lesson page: a choice made on one page is there on the
next. Each of the four is bound to its URL query parameter
(``bind="query-params"``): the URL always says what is on screen, and a link opens
it (``ui.link`` words the notice for a value the binding refused).
"""

from __future__ import annotations

import streamlit as st

from ui import link, loaders, sentence_ids, upload_panel
from ui.notices import say
from ui.recall_notes import recall_line
from ui.selection import Selection
from ui.text import plain

EXAMPLES = {
    "Repeated names (indirect object)": "when Mary and John went to the store , John gave a drink to Mary .",
    "Agreement across a phrase": "the keys to the old cabinet are on the table .",
    "Agreement across a relative clause": "the dog that the children like runs in the park .",
    "Pronouns": "Mary lost her keys because she was late .",
    "Copying (induction)": "the old man walked home . the old man walked home .",
    "Classroom classic": "the animal didn't cross the street because it was too tired .",
}
DEFAULT_TEXT = EXAMPLES["Repeated names (indirect object)"]
# The options are the URL's values (a bound widget writes its option's label into
# the URL), so the labels are the keys and the long names are captions.
MODEL_LABELS = {
    "softmax": "Softmax attention",
    "linear": "Linear attention",
    "delta": "Delta rule (DeltaNet)",
    "upload": "Uploaded",
    "upload2": "Uploaded (second)",
}
_FIXED_TEXT = "_link_fixed_text"
BOUND = {"bind": "query-params", "persist_state": "session"}


def _use_example() -> None:
    choice = st.session_state.get("example")
    if choice in EXAMPLES:
        st.session_state["text"] = EXAMPLES[choice]


def _caption(name: str) -> str:
    """The Model radio's caption of a key: a shipped model's kind, a served model's
    folder, or "Uploaded"."""
    if name in MODEL_LABELS:
        return MODEL_LABELS[name]
    entry = loaders.served_models().entries.get(name)
    return f"{entry.folder.name}/ (served)" if entry is not None else name


def _served_notices(names: list[str]) -> None:
    """One line per operator model still being prepared (what it is doing, for how
    long) or not served. While one is being prepared the lines refresh themselves every
    :data:`PROGRESS_EVERY_S` seconds (:func:`_served_progress`)."""
    entries = loaders.served_models().entries.values()
    if any(e.state == "converting" for e in entries):
        _served_progress(names)
    else:
        _served_lines()


PROGRESS_EVERY_S = 2.0


def _served_lines() -> None:
    for entry in loaders.served_models().entries.values():
        if entry.state == "converting":
            say("caption", f"Preparing {entry.progress()}. It appears here when ready.")
        elif entry.state == "failed":
            say("warning", f"{entry.folder.name}/ is not served: {entry.error}")


@st.fragment(run_every=PROGRESS_EVERY_S)
def _served_progress(names: list[str]) -> None:
    """:func:`_served_lines`, rerun on its own every few seconds; once a model is ready
    (or failed) the whole page reruns, so the Model radio offers it without a reload."""
    if loaders.model_names() != names or not any(
        e.state == "converting" for e in loaders.served_models().entries.values()
    ):
        st.rerun(scope="app")
    _served_lines()


def _model(params: dict) -> str:
    names = loaders.model_names()
    if st.session_state.get("pending_model") in names:  # set by a new upload
        st.session_state["model"] = st.session_state.pop("pending_model")
    name = st.radio(
        "Model",
        names,
        captions=[_caption(n) for n in names],
        key="model",
        **BOUND,
    )
    _served_notices(names)
    raw = params.pop("model", None)
    pending = loaders.served_models().entries.get(raw or "")
    if pending is not None and pending.state == "failed":  # refused: "not ready" would wait
        why = f"{pending.folder.name}/ is not served: {pending.error}"
        link.check("model", raw, name, why)
    elif pending is not None and pending.state != "ready":
        link.check("model", raw, name, f"{pending.folder.name}/ is not ready on this server yet.")
    elif raw in loaders.UPLOAD_SLOTS and raw not in names:  # an upload lives in one session
        st.session_state[upload_panel.OPEN] = True
        link.check(
            "model",
            raw,
            name,
            "an uploaded model lives only in the browser session that uploaded it. Upload "
            "its files under “Inspect your own model” to see it here.",
        )
    else:
        link.check(
            "model",
            raw,
            name,
            f"not one of {', '.join(n for n in names if n not in loaders.UPLOAD_SLOTS)}.",
        )
    return name


def _sentence(params: dict) -> str:
    """The sentence box; a link's text that needs cleaning is replaced on a second run
    (on the first run of a session the link's value wins over session state)."""
    raw = params.pop("text", None)
    fixed = link.clean_text(raw, DEFAULT_TEXT)  # the link's text, read before the box
    if fixed is not None:  # the URL now, the box (which read the link) on a second run
        link.set_param_before_widget("text", fixed)
    if _FIXED_TEXT in st.session_state:
        st.session_state["text"] = st.session_state.pop(_FIXED_TEXT)
    st.session_state.setdefault("text", DEFAULT_TEXT)
    text = st.text_area(
        "Type a sentence",
        key="text",
        height=100,
        help="Ctrl+Enter runs it. Newlines and spaces are kept: a character model reads "
        "them as tokens (shown as ⏎ and ␣). Words a word-level model doesn't know are split "
        "into pieces and flagged.",
        **BOUND,
    )
    if fixed is not None:
        st.session_state[_FIXED_TEXT] = fixed
        st.rerun()
    sentence_ids.forget_unless(text)  # a generated sentence's ids, until another is typed
    st.selectbox(
        "Example sentences for a lesson",
        list(EXAMPLES),
        index=None,
        placeholder="Pick an example…",
        key="example",
        on_change=_use_example,
    )
    return text or ""


def selection(deferred: bool = False) -> Selection:
    """Draw the shared sidebar; the chosen model, sentence, layer and head.

    Args:
        deferred: leave the Layer and Head pickers' places empty (and the selection at
            layer 0, head 0): the page draws them there with :func:`pickers`, inside an
            ``st.fragment``, so that a layer/head change reruns that fragment only.
    """
    params = link.unchecked()
    with st.sidebar:
        name = _model(params)
        model = loaders.get_model(name)
        text = _sentence(params)
        cfg = model.config
        for key, count in (("layer", cfg.n_layer), ("head", cfg.n_head)):
            _check_number(key, count, params.pop(key, None))
        sel = Selection(name, model, text, 0, 0, slots=tuple(st.columns(2)))
        if not deferred:
            sel = pickers(sel)
        upload_panel.panel()
        st.caption(f"Runs on **{model.provider}** (onnxruntime)")
        model_card(model)
    return sel


def pickers(sel: Selection) -> Selection:
    """The Layer and Head pickers drawn in their places in the sidebar; ``sel`` at the
    chosen layer and head.

    ``selection`` calls it, or, with ``deferred=True``, leaves it to the page's
    ``st.fragment``: Streamlit 1.67 lets a fragment write to a container made outside
    it, and a widget it wrote there reruns the fragment, not the app.
    """
    cfg, (c1, c2) = sel.model.config, sel.slots
    layer = c1.selectbox("Layer", range(cfg.n_layer), key="layer", **BOUND)
    head = c2.selectbox("Head", range(cfg.n_head), key="head", **BOUND)
    return sel.at(layer, head)


def _check_number(key: str, count: int, raw: str | None) -> None:
    """The link's notice for a ``layer``/``head`` its bound picker will refuse."""
    link.check(key, raw, raw if raw in {str(i) for i in range(count)} else None,
               f"not a {key} number of this model (0–{count - 1}).")  # fmt: skip


def _architecture(cfg: dict) -> str:
    """The Llama-family fields a config sets (``cfg``: ``ModelConfig.shown()``): grouped
    query heads, RMSNorm, the gated MLP, RoPE's base and dims, a window; "" for none."""
    parts = []
    if cfg.get("n_kv_head"):
        parts.append(f"{cfg['n_kv_head']} key/value heads (grouped-query)")
    if cfg.get("norm") == "rmsnorm":
        parts.append("RMSNorm")
    if cfg.get("gated_mlp"):
        parts.append("gated MLP")
    if cfg.get("position_scheme") == "rotary":
        dims = f", {cfg['rotary_dim']} of {cfg['d_head']} dims" if cfg.get("rotary_dim") else ""
        parts.append(f"RoPE θ {cfg.get('rope_theta', 10000.0):g}{dims}")
    if cfg.get("sliding_window"):
        where = f" on layers {cfg['window_layers']}" if cfg.get("window_layers") else ""
        parts.append(f"sliding window {cfg['sliding_window']}{where}")
    if cfg.get("parallel_residual"):
        parts.append("parallel residual")
    return ("  \n" + plain(", ".join(parts))) if parts else ""


def model_card(model) -> None:
    """Config, size, source and (for shipped models) the measured probe results: one
    :class:`~models.card.ModelCard` schema for shipped models and uploads.

    The name, config strings and file name of an upload come from its files: they are
    shown as plain text.
    """
    cfg = model.config.shown()  # a field the files do not tell reads "unknown"
    card = model.card
    with st.expander("Model card", expanded=False):
        st.markdown(
            f"**{plain(model.name)}**  \n"
            f"{cfg['n_layer']} layers × {cfg['n_head']} heads, d_model {cfg['d_model']}, "
            f"d_head {cfg['d_head']}, context {cfg['context_length']} tokens  \n"
            f"attention: **{plain(cfg['attention'])}**, "
            f"positions: **{plain(cfg['position_scheme'])}**, vocabulary {cfg['vocab_size']}"
            + (f", MLP {plain(cfg['activation'])}" if "activation" in cfg else "")
            + _architecture(cfg)
        )
        if card is None:
            return
        st.markdown(
            f"parameters: {card.parameters:,}  \n"
            f"source: {plain(card.source)}"
            + (f", {plain(card.checkpoint)}" if card.checkpoint else "")
        )
        for note in card.notes:
            st.caption(plain(note))
        probes = card.probes
        if probes:
            st.markdown(
                f"held-out agreement accuracy **{_share(probes['agreement_accuracy'])}**, "
                f"indirect-object accuracy **{_share(probes['ioi_accuracy'])}**, "
                f"validation perplexity {probes['val_perplexity']:.1f}, best induction head "
                f"L{probes['best_induction_head']['layer']} H{probes['best_induction_head']['head']}"
                f" ({probes['best_induction_head']['score']:.2f})"
            )
            if "min_row_sum" in probes:
                st.markdown(
                    f"smallest attention row sum on held-out lines {probes['min_row_sum']:.3f}"
                )
            if "behavioural_induction" in probes:
                recalled = recall_line(probes, card.training)
                st.markdown(
                    "behavioural induction score "
                    f"{probes['behavioural_induction']['score']:.2f} nats"
                    + (f", {recalled}" if recalled else "")
                )


def _share(accuracy: float | None) -> str:
    """A card's probe accuracy, or why there is none (a ``--corpus`` model's vocabulary
    lacked every probe's words: ``training.evaluate`` skipped them)."""
    return "skipped (vocabulary lacks its words)" if accuracy is None else f"{accuracy:.1%}"
