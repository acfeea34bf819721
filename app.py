"""Attention visualizer: ``streamlit run app.py``. Composes the pages, nothing else."""

from pathlib import Path

import streamlit as st

from ui import (
    accessible,
    complexity,
    lanes,
    lecture,
    lessons,
    loaders,
    navigation,
    pagewide,
    presenter,
    reconnect,
    rerun_gate,
    server_start,
    sidebar,
    translate,
    visualizer,
)
from ui.lessons.encoder_decoder import SECTIONS, WIDTHS

# The tab icon is a local SVG (sent inline as a data: URL). A ":material/...:" page_icon, or
# none (then the current page's icon is used), makes the browser fetch the icon's SVG from
# fonts.gstatic.com; the icons in the page itself come from Streamlit's bundled font.
ICON = Path(__file__).resolve().parent / "ui" / "assets" / "eye.svg"
st.set_page_config(
    page_title="Attention visualizer",
    page_icon=str(ICON),
    layout="wide",
    initial_sidebar_state="collapsed" if presenter.from_url() else "auto",
)
selection = None  # this run's selection from the shared sidebar (drawn below)
shown = None  # what the visualizer page shows the views of (ui.visualizer.page)


def _on_selection(render):
    """A page callable: ``render`` with this run's selection."""

    def run() -> None:
        render(selection)

    return run


def _visualizer() -> None:
    global shown
    shown = visualizer.page(selection)


VISUALIZER = st.Page(
    _visualizer,
    title="Visualizer",
    icon=":material/visibility:",
    url_path="visualizer",
)
# The root URL draws the visualizer itself, with the link's parameters. Streamlit serves
# its default page at "/" only (its own url_path, here "home", gives "Page not found"), so
# the visualizer is also an ordinary page at /visualizer and this hidden one is the
# default. No redirect: ``st.switch_page(..., query_params=...)`` from here raised on Back
# (a parameter bound to a widget cannot be set) and Forward then lost the query string.
HOME = st.Page(
    _visualizer,
    title="Visualizer",
    url_path="home",
    default=True,
    visibility="hidden",
)

server_start.on_server_start()
rerun_gate.notice()
# (renderer, title, icon, url_path) of the lesson pages that share the visualizer's sidebar
LESSON_PAGES = [
    (lessons.soft_hard, "Soft vs hard attention", ":material/thermostat:", "soft-hard"),
    (lessons.scoring, "Scoring functions", ":material/functions:", "scoring"),
    (lessons.kernel, "Kernel view", ":material/calculate:", "kernel"),
    (lessons.merged, "Merged bilinear form", ":material/merge:", "merged"),
    (lessons.not_explanation, "Attention is not explanation", ":material/science:",
     "not-explanation"),
]  # fmt: skip
PAGES = {
    "Lecture": [
        st.Page(
            _on_selection(lecture.page),
            title="Lecture path",
            icon=":material/school:",
            url_path="lecture",
        )
    ],
    "Visualizer": [
        HOME,
        VISUALIZER,
        st.Page(
            translate.page, title="Translate", icon=":material/translate:", url_path="translate"
        ),
    ],
    "Lessons": [
        st.Page(_on_selection(render), title=title, icon=icon, url_path=url_path)
        for render, title, icon, url_path in LESSON_PAGES
    ]
    + [
        st.Page(
            lessons.encoder_decoder,
            title="Encoder-decoder → transformer",  # the whole name is cut at 1280 px
            icon=":material/route:",
            url_path="encoder-decoder",
        ),
        st.Page(
            complexity.page, title="Complexity", icon=":material/timer:", url_path="complexity"
        ),
        st.Page(
            lessons.forgetting,
            title="Why linear attention forgets",
            icon=":material/psychology_alt:",
            url_path="forgetting",
        ),
    ],
}
navigation.register([p for section in PAGES.values() for p in section])
page = st.navigation(PAGES)
accessible.page_style()
# A page whose server lost its session (a restart, or a replica gone): one line says so.
reconnect.notice()
pagewide.behaviour()  # Back / Forward, the page list's roles (ui/pagewide.js)
# Pages without the decoder-only models' selection: the translation models have their own.
OWN_MODELS = ("complexity", "translate", "encoder-decoder", "forgetting")
# The shared sidebar is drawn here, before the page: its widgets are then the same on
# every page with a selection, so a choice (and its URL parameters) carries over.
presenter.control()  # on every page: ?present=1 is kept across pages
# A link from the lecture path opens in its state.
navigation.adopt_link_state(
    {"model": loaders.model_names(), "view": visualizer.VIEWS, "tview": translate.VIEWS,
     "nw_width": WIDTHS, "section": SECTIONS}
)  # fmt: skip
# On the visualizer the Layer and Head pickers are drawn after the page, by its views'
# fragment (ui.visualizer.heads): a layer, head or view change reruns that alone.
on_visualizer = page.url_path in (HOME.url_path, VISUALIZER.url_path)
if page.url_path not in OWN_MODELS:
    selection = sidebar.selection(deferred=on_visualizer)
try:
    own = page.url_path in OWN_MODELS
    uploaded = not own and not loaders.is_shared(selection.name)
    with lanes.run_class("" if own else selection.text, uploaded=uploaded):
        page.run()
        if on_visualizer:
            visualizer.after_page(shown, selection)
finally:
    # This run's globals outlive it: its page functions refer to them (and they to the
    # functions), a cycle that only Python's cyclic collector frees, and ``st.Page``
    # objects (``ui.navigation``) hold the functions. Without this, each run's
    # selection, and its analysis with it, stayed alive (a served GPT-2 at T = 1,024:
    # a gigabyte per sentence).
    selection = shown = None
server_start.after_first_run()
