"""The visualizer page: sentence in, every view of every head out.

The model, sentence, layer and head come from the shared sidebar
(``ui.sidebar.selection``); the view is this page's own widget. All five are bound
to URL query parameters (``?text=...&model=linear&layer=1&head=2&view=mask``), so a
teacher can share a link that opens the exact view.
"""

from __future__ import annotations

import re
from dataclasses import replace

import streamlit as st

from inference.sessions import ModelRunError
from inference.text_input import EmptyInput
from ui import downloads, lanes, link, loaders, presenter, sidebar, views
from ui.figures import collecting
from ui.notices import say
from ui.selection import Selection

# The keys are the URL's values and the control's labels (a bound widget writes its
# option's label into the URL); the names head the view.
VIEWS = {
    "attention": "Attention heads",
    "compare": "Compare models",
    "shapes": "Q/K/V shapes",
    "positional": "Positional encoding",
    "mask": "Causal mask & recurrence",
    "block": "Transformer block",
    "predict": "Predictions",
    "stats": "Head statistics",
    "ablate": "Ablation",
    "patch": "Activation patching",
    "lens": "Logit lens",
    "training": "Training history",
}
_EMPTY_VIEW = "_link_empty_view"


def input_notices(result) -> None:
    """Truncation and cleaning notices, and unknown words with suggestions."""
    for notice in result.notices:
        say("info", notice)
    if result.suggestions:
        parts = []
        for word, close in list(result.suggestions.items())[:12]:
            hint = f" (did you mean: {', '.join(close)}?)" if close else ""
            parts.append(f"“{word}”{hint}")
        say(
            "warning",
            "Not in the model's vocabulary, so split into pieces: " + "; ".join(parts),
            icon=":material/spellcheck:",
        )


def model_failed(exc: ModelRunError) -> None:
    """Report an onnxruntime failure on this input; the rest of the page stays usable."""
    say(
        "error",
        f"This model failed on this input: {exc}. Try another sentence or another model.",
        icon=":material/error:",
    )


def start(sel: Selection, title: str, intro: str = "", empty_hint: str = "") -> bool:
    """Title, link notices, intro, and the analysis of the sentence with its notices;
    False (with a hint or the error) when there is nothing to show."""
    st.title(title)
    link.show_notices()
    if intro:
        st.markdown(intro)
    try:
        result = sel.result
    except EmptyInput as exc:
        say("info", f"{exc}{empty_hint}", icon=":material/edit:")
        return False
    except ModelRunError as exc:
        model_failed(exc)
        return False
    input_notices(result)
    return True


def view_picker() -> str:
    """The view control (this page's own, bound to ``view``)."""
    if st.session_state.pop(_EMPTY_VIEW, False):
        st.session_state["view"] = "attention"
    view = st.segmented_control(
        "View",
        list(VIEWS),
        default="attention",
        key="view",
        required=True,
        help=" · ".join(f"{key}: {name}" for key, name in VIEWS.items()),
        bind="query-params",
        persist_state="session",
        label_visibility="collapsed" if presenter.is_on() else "visible",
    )
    if view is None:  # only a link's empty ``view=`` clears it: reset on a second run
        st.session_state[_EMPTY_VIEW] = True
        link.rerun()
    return view


def check_view_link() -> None:
    """A notice for a link's ``view`` that is not a view key (the control, drawn after
    the notices, drops it from the URL: it takes exactly its options' labels)."""
    raw = link.unchecked().pop("view", None)
    if raw not in VIEWS:
        link.check("view", raw, None, f"not one of {', '.join(VIEWS)}.")


def page(sel: Selection) -> Selection | None:
    """Render the visualizer page's head for the sidebar's selection (``sidebar.selection``
    with ``deferred=True``); the selection :func:`heads` draws the views of (a copy
    without its analysis), or None when there is nothing to show.

    ``app.py`` calls :func:`heads` itself, after the page: a widget's id includes the
    script that draws it, and drawn there the Layer and Head pickers are the same widgets
    as the sidebar's on the other pages, so a choice carries over.
    """
    check_view_link()
    if not start(sel, "Attention visualizer", empty_hint=" Or pick an example sentence."):
        return None
    return replace(sel)  # the fragment keeps its arguments: not the analysis


def after_page(shown: Selection | None, sel: Selection) -> None:
    """The views of ``shown`` (:func:`heads`), or, when the page had nothing to show,
    the Layer and Head pickers of ``sel`` alone (the sidebar keeps its shape)."""
    if shown is None:
        sidebar.pickers(sel)
    else:
        heads(shown)


@st.fragment
def heads(sel: Selection) -> None:
    """The layer and head pickers, the view control and the view: a layer, head or view
    change reruns this fragment only (the title, the analysis and the rest of the sidebar
    stay as they are), in its run class (``ui.lanes``) like a full run."""
    with lanes.run_class(sel.text, uploaded=not loaders.is_shared(sel.name)):
        sel = sidebar.pickers(sel)
        view = view_picker()
        if not presenter.is_on():  # presenting: the view's name is in the control above
            st.header(VIEWS[view])  # h2 under the page title (h1): no level skipped
        try:
            sel = sel.on_view(view, views.OPTIONS.get(view, views.no_options)(sel))
            with collecting() as drawn:
                views.RENDERERS[view](sel)
            downloads.view_files(drawn, VIEWS[view], view_lines(sel), file_stem(sel.name, view))
        except ModelRunError as exc:  # e.g. generation or the induction probe of an upload
            model_failed(exc)


def view_lines(sel: Selection) -> list[str]:
    """What a view's HTML file shows, one line each: the model, the sentence, the layer
    and head (``ui.downloads.view_files``)."""
    cfg = sel.model.config
    return [
        f"Model: {sel.name} ({cfg.attention} attention, {cfg.n_layer} layers x {cfg.n_head} heads)",
        f"Sentence: {sel.result.text}",
        f"Layer {sel.layer}, head {sel.head}",
        "From the attention visualizer; each figure is the one the app drew.",
    ]


def file_stem(name: str, view: str) -> str:
    """``attnviz_<view>_<model>``, any character outside [A-Za-z0-9_.-] as ``_``."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", f"attnviz_{view}_{name}")
