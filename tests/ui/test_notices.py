"""Issue #50: one formatter (``ui.notices``) for every one-line message; ``ui.text.plain``
escapes only what markdown could act on, and ``shown`` reads a body back.

The browser's side (the line read back from the page exactly) is
``tests/e2e/test_browser.py::test_a_refused_file_name_reads_exactly_as_written``.
"""

from __future__ import annotations

import random
import string

import pytest

from bench.stwidgets import shown as bench_shown
from ui.notices import body, say
from ui.text import plain, shown

ORDINARY = [
    "model.safetensors: truncated or corrupt (not readable as a safetensors checkpoint)",
    "This model failed on this input: slow.inspect.onnx: stopped: it took longer than 10 s.",
    "Ignored the link's layer=9: not a layer number of this model (0–2).",
    "Input cut to its first 2,000 of 5,123 characters.",
]
MARKUP = [
    "a*b*_c_\\d`e`$x$.safetensors",
    "**b** __b__ `c` ~~s~~ a|b <i>x</i> &amp; [l](u) ![i](http://e.com/a.png)",
    ":red[x] :material/visibility: http://e.com www.e.com a@b.com",
    "# h",
    "> q",
    "- l",
    "1. x",
    "12) y",
    "---",
    "\\",
    "x\\*y\\",
    "trailing colon:",
]


@pytest.mark.parametrize("line", ORDINARY)
def test_an_ordinary_line_travels_as_written(line):
    assert body(line) == line  # before issue #50: "model\\.safetensors\\: truncated …"


@pytest.mark.parametrize("line", MARKUP)
def test_markup_is_escaped_and_read_back(line):
    assert body(line) != line
    assert shown(body(line)) == line == bench_shown(body(line))


def test_every_string_reads_back():
    rng = random.Random(50)
    alphabet = string.ascii_letters[:6] + string.digits[:3] + string.punctuation + " \t"
    for _ in range(3000):
        line = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        assert shown(plain(line)) == line, line
        assert bench_shown(plain(line)) == line, line


def test_an_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="none of"):
        say("toast", "x")
