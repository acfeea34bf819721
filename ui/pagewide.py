"""Page-wide browser behaviour (``ui/pagewide.js``), drawn once on every page as a Streamlit v2
component with nothing to show, at the sidebar's foot:

* Back / Forward: a change of layer, head, view, step or model (the widgets bound to the
  URL) is one browser history entry, which Back undoes (#44 item 4);
* the sidebar's page list is given the roles of what it is, a navigation of named groups
  of links (axe's ``list`` and ``listitem`` rules failed on every page, #44 item 13).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

COMPONENT = "attnviz_page"
JS = Path(__file__).with_name("pagewide.js").read_text()
_component = st.components.v2.component(COMPONENT, js=JS)


def behaviour() -> None:
    """Draw the component (once a run, in the sidebar; it installs itself once a page)."""
    with st.sidebar:
        _component(key="attnviz_page")
