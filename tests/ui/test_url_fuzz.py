"""Every URL parameter a widget is bound to (``bind="query-params"``), fuzzed on every
page that draws it, under AppTest (issue #49): negative, huge, inf, nan, 1e309,
non-numeric, NUL, RTL and zero-width characters, 100,000 characters. No value opens an
exception box; every numeric parameter refuses a value that is not one of its numbers
with the page's one-line notice naming it. (tests/ui/test_url_params.py checks what the
visualizer's own parameters then show.)"""

from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

from tests.helpers import ROOT
from tests.helpers.pages import APP
from ui.lessons.forgetting import DEFAULT_EXAMPLE

# 80,000 characters: six parameters of it stay under Streamlit's 524,288-character query
# string (past it the whole query is ignored, and nothing would be tested).
FUZZ = ["-1", "-7", str(10**30), "inf", "-inf", "nan", "1e309", "1.5", "abc", "\x00",
        "٣", "\u202e1", "\u200b1", "<b>1</b>", "x" * 40_000, ""]  # fmt: skip
# (40,000: the patching view binds 10 parameters, and Streamlit ignores a whole query
# string over 524,288 characters; the server's gate cuts each value first, AppTest has none)
# Values no numeric parameter takes: each gets a notice naming the parameter.
NOT_NUMBERS = set(FUZZ) - {""}  # an empty value clears a control (Streamlit's reading)
NUMERIC = {"layer", "head", "step", "recall_pairs", "recall_example", "steps_t", "history_step",
           "align_layer", "align_head", "steps_layer", "steps_head", "self_layer",
           "self_head"}  # fmt: skip
# (page's url path, parameters held fixed to reach a view, the parameters bound there)
SIDEBAR = {"text", "model", "layer", "head"}
PAGES = [
    ("", {}, SIDEBAR | {"view"}),
    ("", {"view": "compare"}, SIDEBAR | {"vs"}),
    ("", {"view": "ablate"}, SIDEBAR | {"mode"}),
    ("", {"view": "patch"}, SIDEBAR | {"clean", "corrupted", "answer", "wrong", "direction"}),
    ("", {"view": "training"}, SIDEBAR | {"history_step"}),
    ("lecture", {}, SIDEBAR | {"step"}),
    ("soft-hard", {}, SIDEBAR),
    ("forgetting", {}, {"recall_pairs", "recall_example"}),
    ("translate", {}, {"src", "tview", "align_layer", "align_head"}),
    ("translate", {"tview": "steps"}, {"src", "steps_kind", "steps_t"}),
    ("translate", {"tview": "steps", "steps_kind": "transformer"},
     {"src", "steps_t", "steps_layer", "steps_head"}),
    ("translate", {"tview": "self-attention"}, {"src", "self_layer", "self_head"}),
]  # fmt: skip
EVERY_BOUND = set().union(*(keys | set(fixed) for _, fixed, keys in PAGES))
READ_TOO = {"present"}  # read from st.query_params on every page (presenter mode)


@pytest.fixture(scope="module")
def page_hashes() -> dict[str, str]:
    """url path -> page hash (the pages are callables: AppTest switches by hash)."""
    at = AppTest.from_file(APP, default_timeout=120).run()
    return {info.get("url_pathname"): h for h, info in at._registered_pages.items()}


def opened(hashes: dict[str, str], path: str, params: dict[str, str]) -> AppTest:
    """A fresh session whose first run is page ``path`` with ``params`` in its URL."""
    at = AppTest.from_file(APP, default_timeout=120)
    at._page_hash = hashes[path]
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def bound_keys(node) -> set[str]:
    """The query parameters the widgets under ``node`` are bound to."""
    proto = getattr(node, "proto", None)
    own = {proto.query_param_key} if getattr(proto, "query_param_key", "") else set()
    children = getattr(node, "children", None) or {}
    return own.union(*(bound_keys(c) for c in children.values()))


def notices(at: AppTest) -> list[str]:
    """The page's link notices, as they read (markdown escapes undone)."""
    lines = [w.value for w in at.warning if w.icon == ":material/link_off:"]
    return [re.sub(r"\\(.)", r"\1", line) for line in lines]


def test_every_bound_widget_in_the_code_is_fuzzed():
    """A new ``bind="query-params"`` must be added to PAGES (its count is pinned)."""
    sources = "\n".join(p.read_text() for p in (ROOT / "ui").rglob("*.py"))
    code = re.sub(r"``[^`]*``", "", sources)  # not the docstrings' mentions
    sites = code.count('bind="query-params"') + code.count("**BOUND")
    assert sites == 22, f"{sites} bound widgets in ui/: add the new ones to PAGES"
    literal = set(re.findall(r'key="(\w+)"[^)]*(?:bind="query-params"|\*\*BOUND)', sources))
    assert literal <= EVERY_BOUND, literal - EVERY_BOUND
    assert NUMERIC <= EVERY_BOUND


@pytest.mark.slow
def _id(value) -> str:
    """A parameter's test id, the same in every xdist worker (a set's order is not)."""
    if isinstance(value, (set, frozenset)):
        return ",".join(sorted(value))
    if isinstance(value, dict):
        return ",".join(f"{k}={v}" for k, v in sorted(value.items())) or "-"
    return str(value)


@pytest.mark.parametrize(("path", "fixed", "keys"), PAGES, ids=_id)
def test_no_value_of_any_bound_parameter_opens_an_exception_box(page_hashes, path, fixed, keys):
    clean = opened(page_hashes, path, fixed)
    assert not clean.exception, [e.value for e in clean.exception]
    assert bound_keys(clean._tree) - set(fixed) == keys  # what this page binds
    for value in FUZZ:
        at = opened(page_hashes, path, fixed | dict.fromkeys(keys | READ_TOO, value))
        shown = repr(value[:12])
        assert not at.exception, (path, shown, [e.value[:300] for e in at.exception])
        lines = notices(at)
        assert all("\n" not in line and len(line) < 200 for line in lines), lines
        if value in NOT_NUMBERS:
            for key in keys & NUMERIC:
                named = [line for line in lines if f"link's {key}=" in line]
                assert len(named) == 1, (path, key, shown, lines)


def test_the_forgetting_lessons_example_refuses_inf_with_one_line(page_hashes):
    """The issue's two values: an exception box before, one notice line now."""
    for value in ("inf", "1e309"):
        at = opened(page_hashes, "forgetting", {"recall_example": value, "recall_pairs": "3"})
        assert not at.exception, [e.value for e in at.exception]
        want = f"Ignored the link's recall_example={value}: not an example number (1–999)."
        assert notices(at) == [want]
        assert at.number_input(key="recall_example").value == DEFAULT_EXAMPLE  # the default
        assert at.slider(key="recall_pairs").value == 3  # the valid value next to it kept
        assert "recall_example" not in at.query_params  # a reload is clean
