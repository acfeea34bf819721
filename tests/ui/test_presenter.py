"""Presenter mode under AppTest: every page and view draws, the URL keeps present=1, the
captions fold under Notes, the figures get projector-sized text."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.helpers.charts import plotly_charts
from tests.helpers.pages import APP, open_page
from ui.visualizer import VIEWS

PAGES = ("soft-hard", "scoring", "kernel", "merged", "encoder-decoder", "translate", "lecture")


@pytest.fixture(scope="module")
def presenting() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["present"] = "1"
    return at.run()


def _fonts_ok(at: AppTest) -> bool:
    specs = [el.spec for el in plotly_charts(at)]
    return all(s["layout"].get("font", {}).get("size", 0) >= 20 for s in specs)


def _plays(at: AppTest) -> int:
    """How many figures have a ▶ play button; each must carry its frames, and every
    annotation a frame sets must be projector-sized (a frame's annotations replace the
    figure's while it plays)."""
    played = 0
    for el in plotly_charts(at):
        spec = el.spec
        if spec["layout"].get("updatemenus"):
            played += 1
            assert spec.get("frames"), el.proto.id  # presenter mode dropped them once
            for frame in spec["frames"]:
                for note in frame.get("layout", {}).get("annotations", []):
                    assert note["font"]["size"] >= 20, note
    return played


def test_every_view_draws_presenting_with_large_text(presenting):
    at = presenting
    assert at.toggle(key="present").value is True
    played = 0
    for view in VIEWS:
        at.segmented_control(key="view").set_value(view).run()
        assert not at.exception, (view, [e.value for e in at.exception])
        assert at.query_params["present"] == "1", view
        assert _fonts_ok(at), view
        played += _plays(at)
    assert played  # the mask view's state S_i and z_i play
    at.segmented_control(key="view").set_value("attention").run()
    assert any(e.label == "Notes" for e in at.expander)  # the caption, folded


@pytest.mark.parametrize("url_path", PAGES)
def test_every_page_draws_presenting(presenting, url_path):
    at = open_page(url_path, presenting)
    assert not at.exception, [e.value for e in at.exception]
    assert at.query_params["present"] == "1"
    assert _fonts_ok(at)
    _plays(at)
    assert not at.dataframe, url_path  # tables in 20 px (ui.presenter.table)


def test_turning_it_off_leaves_the_url():
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["present"] = "1"
    at.run()
    at.toggle(key="present").set_value(False).run()
    assert "present" not in at.query_params and not at.exception


def _run(**params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update(params)
    at.run()
    assert not at.exception
    return at


def test_the_head_statistics_are_a_20px_table_with_the_dataframes_numbers():
    """Presenting, the head statistics are a static table (the dataframe's canvas keeps its
    small font; the page's style sets the table's to 20 px), each float as the dataframe
    shows it; its captions fold under Notes."""
    at = _run(present="1", view="stats")
    assert not at.dataframe
    (table,) = at.table
    shown = table.value  # the strings the browser prints
    assert list(shown.columns[:2]) == ["layer", "head"] and len(shown) == 12  # 3 x 4 heads
    (plain,) = _run(view="stats").dataframe
    for column in ("previous_token", "entropy"):
        numbers = plain.value[column].tolist()
        assert shown[column].tolist() == [f"{v:g}" for v in numbers]  # 0.23, not 0.2300
    assert any(e.label == "Notes" for e in at.expander)


def test_the_walkthrough_is_a_20px_table_with_bars_in_its_weights():
    """Presenting, one query's step-by-step table is static (every row in view, 20 px),
    its weights printed to 4 decimals, each with a bar as long as its weight; the numbers
    are the dataframe's, whose last column is the head's row and sums to 1."""
    at = _run(present="1")
    (table,) = [t for t in at.table if t.value.columns[0] == "key"]
    (plain,) = [d for d in _run().dataframe if d.value.columns[0] == "key"]
    weights = plain.value[plain.value.columns[-1]].to_numpy(dtype=float)  # (T,)
    assert abs(weights.sum() - 1) < 1e-6
    cells = table.value[table.value.columns[-1]].tolist()
    assert [c.split(" ")[0] for c in cells] == [f"{w:.4f}" for w in weights]
    bars = [c.split(" ", 1)[1] if " " in c else "" for c in cells]
    longest = max(range(len(weights)), key=lambda i: weights[i])
    assert bars[longest].startswith("█") and all(set(b) <= set("█▏▎▍▌▋▊▉") for b in bars)
    assert len(bars[longest]) == max(len(b) for b in bars)  # the largest weight, the longest bar


def test_the_lecture_s_comparison_and_the_predictions_are_tables_when_presenting():
    """The CNN / RNN / self-attention table of lecture step 6 and the Predictions view's
    top-3 table (probabilities as percentages) are static 20 px tables too."""
    at = _run(present="1", view="predict")
    assert not at.dataframe
    (top,) = at.table
    assert all(text.endswith("%") for text in top.value["p #1"])
    at = open_page("lecture", at)
    at.session_state["step"] = 6
    at.run()
    assert not at.exception and not at.dataframe
    (costs,) = at.table
    assert {"self-attention", "RNN"} <= set(costs.value.iloc[:, 0]), costs.value


def test_generated_tokens_are_a_table_with_their_percentages_when_presenting():
    at = _run(present="1", view="predict", text="the cat")
    at.button(key="generate").click().run()
    assert not at.exception and not at.dataframe
    rows = at.table[-1]
    assert {"token", "p"} <= set(rows.value.columns) and len(rows.value) == 10
    assert all(text.endswith("%") for text in rows.value["p"])


def test_the_forgetting_lesson_presenting_folds_its_words_under_one_notes(presenting):
    """Presenting "Why linear attention forgets": its introduction and the answers' caption
    fold under one "Notes" below the answers (two in a row once), none left in place."""
    from ui.lessons.forgetting import INTRO

    at = open_page("forgetting", presenting)
    assert not at.exception, [e.value for e in at.exception]
    (notes,) = [e for e in at.expander if e.label == "Notes"]
    assert [m.value for m in notes.markdown][:1] == [INTRO]
    assert "The right answer" in notes.caption[0].value
    assert INTRO not in [m.value for m in at.main.markdown if m not in notes.markdown]
