"""ui.selection.Selection: one object per run, on the real shipped models."""

from __future__ import annotations

import threading

import pytest

from inference.text_input import EmptyInput
from tests.helpers import EXPORTED
from ui.selection import Selection


@pytest.fixture(scope="module")
def model():
    from inference.runtime import load_shipped

    return load_shipped(EXPORTED, "softmax")


def test_the_analysis_is_computed_once_and_kept_on_another_view(model):
    sel = Selection("softmax", model, "the cat sat on the mat .", layer=1, head=2)
    result = sel.result
    assert sel.result is result and result.T == 7
    on = sel.on_view("attention", {"mode": "selected head", "query": 3})
    assert on.result is result and (on.layer, on.head, on.view) == (1, 2, "attention")
    assert dict(on.options) == {"mode": "selected head", "query": 3}
    with pytest.raises(TypeError):
        on.options["query"] = 4  # read-only: a renderer cannot change the selection
    assert sel.head_array("attn").shape == (7, 7)
    assert (sel.head_array("q") == result.outputs["q"][1, 2]).all()
    assert sel.tokens == result.display_tokens


def test_an_empty_sentence_raises_when_the_analysis_is_asked_for(model):
    sel = Selection("softmax", model, "   ", layer=0, head=0)
    with pytest.raises(EmptyInput):
        _ = sel.result


class _Stuck:
    """The real shipped model whose ``inspect`` first waits until the test releases it:
    an analysis that is stuck (as a slow uploaded graph's is) for as long as the test says."""

    def __init__(self, model):
        self._model = model
        self.entered, self.release = threading.Event(), threading.Event()

    def __getattr__(self, name):
        return getattr(self._model, name)

    def inspect(self, ids, names=None):
        self.entered.set()
        self.release.wait(timeout=300)
        return self._model.inspect(ids, names)


def test_one_sessions_slow_analysis_does_not_hold_up_another(model):
    """Issue #25: the analysis of one selection must not take a lock another selection's
    analysis waits for (``functools.cached_property`` took one per class on Python 3.11)."""
    import streamlit as st

    from ui import loaders

    stuck = _Stuck(model)
    st.session_state[loaders.UPLOAD_KEY] = stuck  # A's session: an upload (bare mode's state)
    results: dict[str, object] = {}
    slow = Selection("upload", stuck, "the dog sat on the mat .", layer=0, head=0)
    other = Selection("softmax", model, "the cat sat on the old mat .", layer=0, head=0)
    a = threading.Thread(target=lambda: results.setdefault("a", slow.result), daemon=True)
    b = threading.Thread(target=lambda: results.setdefault("b", other.result), daemon=True)
    try:
        a.start()
        assert stuck.entered.wait(timeout=120), "A's analysis never started"
        b.start()
        b.join(timeout=120)
        assert not b.is_alive(), "B's analysis waited for A's"
        assert results["b"].T == 8 and "a" not in results  # B answered while A was stuck
    finally:
        stuck.release.set()
        a.join(timeout=120)
        st.session_state.pop(loaders.UPLOAD_KEY, None)
        st.session_state.pop(loaders.UPLOAD_CACHE, None)
    assert results["a"].T == 7
