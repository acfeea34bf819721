"""Links are user input: every URL parameter fuzzed under AppTest.

A bad value is ignored with one notice line naming the parameter, the page keeps
working, the rewritten URL holds only valid values (so a reload is clean), and a
valid link is still honoured.
"""

from __future__ import annotations

import re
import unicodedata

import pytest
from streamlit.testing.v1 import AppTest

from tests.helpers import ROOT
from tests.helpers.charts import plotly_charts
from ui.link import MAX_URL_TEXT, URL_KEYS
from ui.text import shown
from ui.visualizer import VIEWS

APP = str(ROOT / "app.py")
LONG = "x" * 5_000
FUZZ = [
    "²",  # superscript two: str.isdigit() is True, int() refuses it
    "①",
    "٣",  # Arabic-Indic three: int() accepts it
    "１",  # full-width one: int() accepts it
    str(10**30),
    "-1",
    "1.0",
    " 1",
    "\x00",
    "\x1b[31m",
    LONG,
    "",
    "![x](http://example.com/a.png)",
]
# What the shipped models accept; the fuzz values above are none of these.
VALID = {
    "model": {"softmax", "linear"},
    "view": set(VIEWS),
    "layer": {"0", "1", "2"},
    "head": {"0", "1", "2", "3"},
}


def open_link(params: dict[str, str]) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def notices(at: AppTest) -> list[str]:
    return [shown(w.value) for w in at.warning if w.icon == ":material/link_off:"]


def about(lines: list[str], key: str) -> list[str]:
    """Notice lines naming parameter ``key``."""
    return [n for n in lines if f"link's {key}=" in n or f"link's {key} " in n]


def works(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert plotly_charts(at) or at.get("vega_lite_chart") or at.dataframe or at.info


def expected_text(raw: str) -> str | None:
    """The sentence a link's ``text`` should give: capped, each run of control
    characters a space between two visible characters, else gone."""
    cut = raw[:MAX_URL_TEXT]
    runs = "".join(ch for ch in map(chr, range(0x110000)) if _control(ch))
    pattern = "[" + re.escape(runs) + "]+"

    def space(m: re.Match) -> str:
        left, right = cut[m.start() - 1 : m.start()], cut[m.end() : m.end() + 1]
        return " " if left.strip() and right.strip() else ""

    kept = re.sub(pattern, space, cut)
    return kept if kept.strip() else None


def _control(ch: str) -> bool:
    return unicodedata.category(ch) == "Cc" and ch not in "\n\t"


@pytest.mark.parametrize("value", FUZZ + list(VIEWS), ids=repr)
def test_every_parameter_fuzzed(value):
    at = open_link(dict.fromkeys(URL_KEYS, value))
    works(at)
    lines = notices(at)
    for line in lines:
        assert "\n" not in line and len(line) < 200, line  # one short line each
    for key, valid in VALID.items():
        if value in valid:
            assert about(lines, key) == [], (key, lines)
        else:
            assert len(about(lines, key)) == 1, (key, lines)
    assert at.radio(key="model").value in VALID["model"]
    assert at.segmented_control(key="view").value == (value if value in VIEWS else "attention")
    assert (at.selectbox(key="layer").value, at.selectbox(key="head").value) == (0, 0)
    want = expected_text(value)
    if want is None:
        assert len(about(lines, "text")) == 1, lines
        assert at.text_area(key="text").value.startswith("when Mary")  # the default
    else:
        assert at.text_area(key="text").value == want
        changed = want != value
        assert len(about(lines, "text")) == int(changed), lines
    # The bound widgets dropped every refused value from the URL (and a default one);
    # only an empty ``view=`` stays (Streamlit reads it as "clear the control", which
    # the page undoes on a second run): the rest is valid, and a reload refuses nothing.
    written = {k: v for k, v in at.query_params.items() if not (k == "view" and v == "")}
    assert set(written) <= set(URL_KEYS), written
    for key, valid in VALID.items():
        assert written.get(key, next(iter(valid))) in valid, (key, written)
    reloaded = open_link(written)
    works(reloaded)
    refused = [n for key in VALID for n in about(notices(reloaded), key)]
    assert refused == [], refused


def test_the_notice_names_the_value_and_the_range():
    at = open_link({"layer": "²", "head": "10", "model": "linear"})
    works(at)
    assert "Ignored the link's layer=²: not a layer number of this model (0–2)." in notices(at)
    assert "Ignored the link's head=10: not a head number of this model (0–3)." in notices(at)
    assert at.radio(key="model").value == "linear"


def test_invisible_and_long_values_are_quoted_readably():
    at = open_link({"model": "\x1b[2J", "view": LONG, "text": "the cat\x00 sat\x1b"})
    works(at)
    lines = notices(at)
    assert "Ignored the link's model=\\x1b[2J: not one of softmax, linear, delta." in lines
    (view,) = about(lines, "view")
    assert f"view={'x' * 24}… (5,000 characters)" in view
    (text,) = about(lines, "text")
    assert "stripped of 2 control character(s) (\\x00, \\x1b)" in text
    assert at.text_area(key="text").value == "the cat sat"


def test_a_valid_link_is_honoured_next_to_a_bad_one():
    link = {"text": "the cat sat on the mat .", "model": "linear", "layer": "2", "head": "3"}
    at = open_link({**link, "view": "mask"})
    works(at)
    assert notices(at) == []
    assert at.text_area(key="text").value == link["text"]
    assert at.radio(key="model").value == "linear"
    assert (at.selectbox(key="layer").value, at.selectbox(key="head").value) == (2, 3)
    assert at.segmented_control(key="view").value == "mask"
    bad = open_link({**link, "view": "①"})
    works(bad)
    assert len(notices(bad)) == 1 and "view=①" in notices(bad)[0]
    assert (bad.selectbox(key="layer").value, bad.selectbox(key="head").value) == (2, 3)
    assert bad.radio(key="model").value == "linear"


def test_lesson_pages_read_links_the_same_way():
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["layer"] = "٣"
    at.query_params["head"] = "1"
    at.run()
    pages = at._registered_pages  # callables, not files: switch by the page hash
    at._page_hash = next(h for h, i in pages.items() if i.get("url_pathname") == "soft-hard")
    at = at.run()
    works(at)
    assert [w.value for w in at.warning] == []  # the link was read on the first page
    fresh = AppTest.from_file(APP, default_timeout=120)
    fresh._page_hash = at._page_hash
    fresh.query_params["layer"] = "٣"
    fresh.query_params["head"] = "1"
    fresh.run()
    works(fresh)
    assert about(notices(fresh), "layer") and not about(notices(fresh), "head")
    assert fresh.selectbox(key="head").value == 1


def test_the_widgets_are_bound_to_their_parameters_and_drop_refused_values():
    at = open_link({"layer": "²", "head": "2", "model": "linear", "view": "stats"})
    works(at)
    widgets = {
        "model": at.radio(key="model"),
        "text": at.text_area(key="text"),
        "layer": at.selectbox(key="layer"),
        "head": at.selectbox(key="head"),
        "view": at.segmented_control(key="view"),
    }
    for key, widget in widgets.items():
        assert widget.proto.query_param_key == key  # bind="query-params"
    assert len(about(notices(at), "layer")) == 1 and len(notices(at)) == 1
    # Streamlit itself took the valid values and dropped the refused one from the URL.
    assert dict(at.query_params) == {"head": "2", "model": "linear", "view": "stats"}
    at.run()  # the notice belongs to the run that read the link
    assert notices(at) == []


def test_a_control_character_becomes_a_space_in_the_box_and_the_url():
    """#20 item 12: "hi\x07there" reads "hi there" (not "hithere"), and the URL holds
    the clean text, so a reload shows no notice again."""
    at = open_link({"text": "hi\x07there"})
    works(at)
    assert at.text_area(key="text").value == "hi there"
    assert at.query_params["text"] == "hi there"
    assert len(about(notices(at), "text")) == 1
    reloaded = open_link(dict(at.query_params))
    assert notices(reloaded) == []
