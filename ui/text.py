"""User-supplied strings as plain text inside Streamlit's markdown.

``st.markdown``, ``st.error`` / ``st.info`` / ``st.success`` / ``st.warning``,
captions, widget labels and radio / select-slider options are rendered as
markdown: a file named ``![x](http://example.com/a.png).onnx`` would draw a
remote image, ``:red[...]`` would colour text and ``$...$`` would typeset LaTeX.
CommonMark lets any ASCII punctuation character be backslash-escaped, so
escaping all of them leaves nothing for the renderer to interpret.
"""

from __future__ import annotations

import string

_ESCAPES = {ord(ch): "\\" + ch for ch in string.punctuation}


def plain(text: object) -> str:
    """``str(text)`` with every ASCII punctuation character backslash-escaped.

    Links, images, emphasis, code, HTML, ``:material/…:`` icons, ``:red[…]``
    directives and ``$…$`` LaTeX then render literally; letters, digits, spaces
    and non-ASCII characters are unchanged. Use it for the user-derived part of
    a markdown body only (never inside backticks, where escapes show).
    """
    return str(text).translate(_ESCAPES)


def plain_lines(text: object) -> str:
    """:func:`plain`, with each newline kept as a markdown line break (a character model's
    text keeps its lines)."""
    return plain(text).replace("\n", "  \n")
