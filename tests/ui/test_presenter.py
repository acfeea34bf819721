"""Presenter mode under AppTest: every page and view draws, the URL keeps present=1, the
captions fold under Notes, the figures get projector-sized text."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from tests.helpers.pages import APP, open_page
from ui.visualizer import VIEWS

PAGES = ("soft-hard", "scoring", "kernel", "merged", "encoder-decoder", "translate", "lecture")


@pytest.fixture(scope="module")
def presenting() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["present"] = "1"
    return at.run()


def _fonts_ok(at: AppTest) -> bool:
    specs = [json.loads(el.proto.spec) for el in at.get("plotly_chart")]
    return all(s["layout"].get("font", {}).get("size", 0) >= 20 for s in specs)


def _plays(at: AppTest) -> int:
    """How many figures have a ▶ play button; each must carry its frames, and every
    annotation a frame sets must be projector-sized (a frame's annotations replace the
    figure's while it plays)."""
    played = 0
    for el in at.get("plotly_chart"):
        spec = json.loads(el.proto.spec)
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


def test_the_head_statistics_are_a_20px_table_with_the_dataframes_numbers():
    """Presenting, the head statistics are a static table (the dataframe's canvas keeps its
    small font; the page's style sets the table's to 20 px), each float as the dataframe
    shows it; its captions fold under Notes."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"present": "1", "view": "stats"})
    at.run()
    assert not at.exception and not at.dataframe
    (table,) = at.table
    frame = table.value
    assert list(frame.columns[:2]) == ["layer", "head"] and len(frame) == 12  # 3 x 4 heads
    shown = pa.ipc.open_stream(table.proto.arrow_data.styler.display_values).read_all()
    shown = shown.to_pandas()  # the strings the browser prints (the Styler's format)
    for column in ("previous_token", "entropy"):
        assert all(
            float(text) == float(f"{v:g}")
            for text, v in zip(shown[column], frame[column], strict=True)
        )
        assert not any(text.endswith("00") for text in shown[column])  # 0.23, not 0.2300
    assert any(e.label == "Notes" for e in at.expander)


def test_the_walkthrough_is_a_20px_table_with_bars_in_its_weights():
    """Presenting, one query's step-by-step table is static (every row in view, 20 px),
    its weights printed to 4 decimals with a bar in each cell; the numbers are the
    dataframe's: the last column is the head's row and sums to 1."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["present"] = "1"
    at.run()
    assert not at.exception
    (table,) = [t for t in at.table if t.value.columns[0] == "key"]
    weights = table.value[table.value.columns[-1]].to_numpy(dtype=float)  # (T,)
    assert abs(weights.sum() - 1) < 1e-6
    styler = table.proto.arrow_data.styler
    shown = pa.ipc.open_stream(styler.display_values).read_all().to_pandas()
    assert all(len(text.split(".")[1]) == 4 for text in shown[shown.columns[-1]])
    assert "linear-gradient" in styler.styles  # the bars


def test_the_lecture_s_comparison_and_the_predictions_are_tables_when_presenting():
    """The CNN / RNN / self-attention table of lecture step 6 and the Predictions view's
    top-3 table (probabilities as percentages) are static 20 px tables too."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"present": "1", "view": "predict"})
    at.run()
    assert not at.exception and not at.dataframe
    (top,) = at.table
    shown = pa.ipc.open_stream(top.proto.arrow_data.styler.display_values).read_all()
    assert all(text.endswith("%") for text in shown.to_pandas()["p #1"])
    at = open_page("lecture", at)
    at.session_state["step"] = 6
    at.run()
    assert not at.exception and not at.dataframe
    (costs,) = at.table
    assert {"self-attention", "RNN"} <= set(costs.value.iloc[:, 0]), costs.value


def test_generated_tokens_are_a_table_with_their_percentages_when_presenting():
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"present": "1", "view": "predict", "text": "the cat"})
    at.run()
    at.button(key="generate").click().run()
    assert not at.exception and not at.dataframe
    rows = at.table[-1]
    assert {"token", "p"} <= set(rows.value.columns) and len(rows.value) == 10
    shown = pa.ipc.open_stream(rows.proto.arrow_data.styler.display_values).read_all()
    assert all(text.endswith("%") for text in shown.to_pandas()["p"])


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
