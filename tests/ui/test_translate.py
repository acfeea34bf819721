"""The translation page and the encoder-decoder lesson under AppTest, on the shipped
translation models: translations, the four views, and bad input as one clear note."""

from __future__ import annotations

import numpy as np
import pytest

from corpus.translation import translate
from tests.helpers.charts import plotly_charts
from tests.helpers.pages import open_page
from tests.ui.figure_data import decoded
from tests.ui.test_lessons_pages import _decode

SENTENCE = "some old kings liked the red lamps near the park ."


def no_errors(at) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


@pytest.fixture(scope="module")
def page():
    at = open_page("translate")
    at.text_input(key="src").set_value(SENTENCE).run()
    no_errors(at)
    return at


def test_three_translations_beside_the_gold_one(page):
    table = page.dataframe[0].value
    assert list(table["model"])[:3] == [
        "GRU, fixed context", "GRU + Bahdanau attention", "Transformer"
    ]  # fmt: skip
    gold = " ".join(translate(SENTENCE.split()).target)
    assert list(table["translation"])[3] == gold
    assert set(table["exact"][:3]) <= {"✓", "✗"} and table["exact"][3] == ""


def test_every_view_draws(page):
    """... and says what it shows in words: no raw Python True / False (#20 item 10)."""
    import re

    for view in ("alignment", "steps", "self-attention", "context"):
        page.segmented_control(key="tview").set_value(view).run()
        no_errors(page)
        assert plotly_charts(page), view
        texts = [e.value for kind in ("markdown", "caption", "info") for e in page.get(kind)]
        assert not [t for t in texts if re.search(r"\b(True|False|None)\b", str(t))], view
    assert any("read the same vector: all 128 numbers" in c.value for c in page.caption)


def test_the_alignment_matrix_overlays_the_gold_alignment(page):
    page.segmented_control(key="tview").set_value("alignment").run()
    spec = plotly_charts(page)[0].spec
    heat = next(t for t in spec["data"] if t["type"] == "heatmap")
    gold = next(t for t in spec["data"] if t.get("name") == "gold alignment")
    z = _decode(heat["z"])
    assert np.allclose(z.sum(1), 1.0, atol=1e-5)  # each output row sums to 1
    assert len(gold["x"]) == len(translate(SENTENCE.split()).target)
    page.checkbox(key="gold_overlay").uncheck().run()
    spec = plotly_charts(page)[0].spec
    assert not any(t.get("name") == "gold alignment" for t in spec["data"])


@pytest.mark.parametrize(
    "text, note",
    [
        ("", "Type an English sentence"),
        ("the dog saw a zebrafish .", "Not in the toy lexicon"),
        ("The dog saw a cat.", "Read as"),
        (" ".join(["the big dog saw a cat"] * 8) + " .", "so only the first 23 are translated"),
        ("dog the saw .", "No gold translation"),
    ],
)
def test_bad_input_is_one_clear_note(text, note):
    at = open_page("translate")
    at.text_input(key="src").set_value(text).run()
    no_errors(at)
    shown = [e.value for e in [*at.info, *at.warning]]
    assert any(note in s for s in shown), shown


def test_the_lesson_walks_the_path_on_live_numbers():
    at = open_page("encoder-decoder")
    no_errors(at)
    titles = [h.value for h in at.header]  # h2 under the page title (#20 item 20)
    assert titles[0].startswith("1. An encoder-decoder") and titles[-1].startswith("6.")
    before = [c.value for c in at.caption if "Mean |f̂ − f|" in c.value]
    at.slider(key="nw_width").set_value(1.5).run()
    after = [c.value for c in at.caption if "Mean |f̂ − f|" in c.value]
    assert before and after and before != after  # the kernel width changes the fit


def test_check_yourself_answers_are_hidden_until_asked():
    at = open_page("kernel")
    no_errors(at)
    assert not any("φ(q)ᵀφ(k)" in s.value for s in at.success)
    at.toggle(key="check_feature_map").set_value(True).run()
    assert any("d × d state" in s.value for s in at.success)


def test_the_decoding_steps_play_in_the_browser(page):
    """▶ play on the steps view: one frame per step of the free run, the step's attention."""
    page.segmented_control(key="tview").set_value("steps").run()
    for kind in ("bahdanau", "transformer"):
        page.radio(key="steps_kind").set_value(kind).run()
        no_errors(page)
        played = next(el.spec for el in plotly_charts(page) if el.spec.get("frames"))
        frames = played["frames"]
        assert len(frames) >= 3 and frames[0]["layout"]["title"]["text"].startswith("step 0")
        for frame in frames:
            assert abs(sum(decoded(frame["data"][0]["y"])) - 1) < 1e-4  # a step's weights


def test_every_example_is_inside_the_toy_grammar(exported_dir):
    """#20 item 1: each built-in example has a gold translation and no unknown word."""
    from inference.seq2seq import load_translator, read_source
    from ui.translate import EXAMPLES

    model = load_translator(exported_dir, "transformer")
    for text in EXAMPLES:
        source = read_source(model, text)
        assert not source.unknown, (text, source.unknown)
        assert translate(source.words).target, text  # raises OutsideGrammar outside it


def test_the_lesson_cites_cho_for_c_at_every_step():
    """#20 item 6: feeding c at every decoder step is Cho et al. 2014; Sutskever et al.
    2014 give c only as the decoder's initial state."""
    at = open_page("encoder-decoder")
    text = next(m.value for m in at.markdown if "context vector" in m.value)
    assert "Cho et al. (2014) also feed c at every step" in text  # #44 item 16
    assert "Sutskever et al. (2014) give c to the decoder only as its initial state" in text


@pytest.mark.parametrize(
    "text", ["I don't like grapes , but I like bread .", "how are you today ?"]
)
def test_everyday_sentences_draw_on_every_view_and_model(text):
    """#20 item 17: sentences outside the toy grammar, where Bahdanau's decoder reaches
    max_len without <eos>: every view and model draws, the cut is one note."""
    at = open_page("translate")
    at.text_input(key="src").set_value(text).run()
    no_errors(at)
    assert any("no end of sentence within 40 words" in i.value for i in at.info)
    for view in ("alignment", "steps", "self-attention", "context"):
        at.segmented_control(key="tview").set_value(view).run()
        no_errors(at)
        assert plotly_charts(at), view
    at.segmented_control(key="tview").set_value("steps").run()
    for kind in ("bahdanau", "transformer", "gru"):
        at.radio(key="steps_kind").set_value(kind).run()
        no_errors(at)
        assert plotly_charts(at), kind


def _open_translate(params: dict[str, str]):
    from streamlit.testing.v1 import AppTest

    from tests.helpers.pages import APP

    at = AppTest.from_file(APP, default_timeout=120).run()  # registers the pages
    at.query_params.clear()
    for key, value in params.items():
        at.query_params[key] = value
    return open_page("translate", at)


def _link_notices(at) -> list[str]:
    return [w.value for w in at.warning if w.icon == ":material/link_off:"]


def test_the_steps_view_lives_in_the_url_and_a_bad_link_is_named():
    """#20 item 12: model, layer, head and t of the steps view are URL parameters; a bad
    ``tview=`` gets one notice; a control character in ``src`` becomes a space in the
    box and in the URL (no glued words, no notice on reload)."""
    link = {"tview": "steps", "steps_kind": "transformer", "steps_layer": "1",
            "steps_head": "3", "steps_t": "4"}  # fmt: skip
    at = _open_translate(link)
    no_errors(at)
    assert _link_notices(at) == []
    assert at.radio(key="steps_kind").value == "transformer"
    assert (at.selectbox(key="steps_layer").value, at.selectbox(key="steps_head").value) == (1, 3)
    assert at.slider(key="steps_t").value == 4
    bad = _open_translate({"tview": "bogus", "src": "the dog\x07saw a cat ."})
    no_errors(bad)
    lines = _link_notices(bad)
    assert any("tview=bogus" in n for n in lines), lines  # nothing in it is markdown
    assert bad.text_input(key="src").value == "the dog saw a cat ."
    assert bad.query_params["src"] == "the dog saw a cat ."
    reloaded = _open_translate(dict(bad.query_params))
    assert _link_notices(reloaded) == []


def test_every_head_picker_opens_on_the_best_head():
    """#20 item 10: the steps and self-attention views open on the transformer's best
    cross-attention head, as the alignment view does."""
    from ui.translate_views import best_head

    at = open_page("translate")
    for view, prefix in (("alignment", "align"), ("steps", "steps"), ("self-attention", "self")):
        at.segmented_control(key="tview").set_value(view).run()
        if view == "steps":
            at.radio(key="steps_kind").set_value("transformer").run()
        got = at.selectbox(key=f"{prefix}_layer").value, at.selectbox(key=f"{prefix}_head").value
        assert got == best_head(), view
