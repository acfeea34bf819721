"""User-supplied strings as plain text inside Streamlit's markdown.

``st.markdown``, ``st.error`` / ``st.info`` / ``st.success`` / ``st.warning``,
captions, widget labels and radio / select-slider options are rendered as
markdown: a file named ``![x](http://example.com/a.png).onnx`` would draw a
remote image, ``:red[...]`` would colour text and ``$...$`` would typeset LaTeX.
CommonMark lets any ASCII punctuation character be backslash-escaped, and the
browser shows the character without its backslash. :func:`plain` escapes the
characters that can begin or close markup (CommonMark, GitHub's extensions, LaTeX
and Streamlit's own ``:…`` forms) and leaves the rest, so an ordinary line
("model.safetensors: truncated (…)") travels as written (issue #50: a reader of the
websocket, or of a test's element values, saw a backslash before every dot).
"""

from __future__ import annotations

import re
import string

# Markup anywhere in a line: emphasis and code (* _ `), links and images ([ ] and the
# ! before them), HTML and autolinks (< > &), LaTeX ($), strikethrough (~), GFM
# tables (|), e-mail autolinks (@), the escape itself (\).
_ALWAYS = re.compile(r"[\\`*_\[\]!<>&$~|@]")
# Streamlit's ":red[…]", ":material/icon:", emoji ":smile:" and "http://" autolinks: a
# colon not followed by a space (the colon of "Not loaded: …" stays).
_COLON = re.compile(r":(?! )")
_WWW = re.compile(r"(?i)(?<=www)\.")  # GFM's "www.example.com" autolink
# A line's start: a heading, quote, list item, thematic break, fence, table or HTML
# block begins with a punctuation character after at most three spaces, an ordered
# list item with digits and "." or ")". Four spaces would begin a code block.
_LINE_START = re.compile(r"(?m)^([ \t]*)(?:([" + re.escape(string.punctuation) + r"])|(\d+)([.)]))")
_ESCAPED = re.compile(r"\\([" + re.escape(string.punctuation) + r"])")


def _escape(match: re.Match) -> str:
    return "\\" + match.group(0)


def _line_start(match: re.Match) -> str:
    indent, mark, digits, dot = match.groups()
    if mark is not None:
        return indent + ("" if mark == "\\" else "\\") + mark
    return f"{indent}{digits}\\{dot}"


def plain(text: object) -> str:
    """``str(text)`` with every markdown-active ASCII punctuation character
    backslash-escaped: the browser shows exactly ``str(text)``.

    Links, images, emphasis, code, HTML, ``:material/…:`` icons, ``:red[…]``
    directives and ``$…$`` LaTeX then render literally; letters, digits, spaces,
    non-ASCII characters and the punctuation no markup starts with (``. , ; : ( ) ' "
    / - ? % = + # { } ^``, outside the cases named in the module) are unchanged. Use it
    for the user-derived part of a markdown body only (never inside backticks, where
    escapes show). :func:`shown` undoes it.
    """
    s = _ALWAYS.sub(_escape, str(text))
    s = _WWW.sub(r"\.", _COLON.sub(r"\:", s))
    return _LINE_START.sub(_line_start, s)


def plain_lines(text: object) -> str:
    """:func:`plain`, with each newline kept as a markdown line break (a character model's
    text keeps its lines)."""
    return plain(text).replace("\n", "  \n")


def shown(body: str) -> str:
    """What a browser shows for a markdown ``body`` written with :func:`plain` parts: each
    backslash escape of an ASCII punctuation character replaced by the character
    (CommonMark's rule), so ``shown(plain(x)) == x`` for every one-line string ``x``."""
    return _ESCAPED.sub(r"\1", body)
