"""What the lecture steps and lessons say, checked against what is true and against each
other (issue #44, items 14-19): each claim as the page renders it under AppTest, or as
the step's text source holds it."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.helpers.charts import plotly_charts
from tests.helpers.pages import APP, open_page
from ui.lecture.story import STEPS


def _points(step: int) -> str:
    return " ".join(STEPS[step - 1].points)


def _texts(at: AppTest) -> str:
    return " ".join(el.value for el in [*at.markdown, *at.caption, *at.header, *at.title])


def test_step_10_and_the_complexity_page_state_the_same_costs():
    """Item 14: softmax memory is O(T²) for the weights plus O(T·d), not O(T²·d); the
    lecture and the Complexity page say the same."""
    from lessons.architectures import attention_costs

    step = _points(12)  # the complexity step
    assert "O(T²·d) time and memory" not in step
    costs = attention_costs("T")
    assert costs["softmax_memory"] == "O(T²) for the weights plus O(T·d)"
    for claim in costs.values():
        assert claim in step, claim
    at = open_page("complexity")
    page = _texts(at)
    for claim in costs.values():
        assert claim in page, claim
    assert "time and memory ∝" not in page
    at.toggle(key="check_complexity").set_value(True).run()  # the bench's numbers: no Measure
    check = " ".join(el.value for el in at.success if "Softmax attention:" in el.value)
    assert "O(n²) for the weights plus O(n·d) memory" in check, check


def test_the_forgetting_lesson_says_positive_features_are_never_orthogonal():
    """Item 15: with φ = elu + 1 no two φ(k) are orthogonal; the random-unit-keys curve
    is labelled an optimistic bound, in the caption and the figure's title."""
    at = open_page("forgetting")
    text = _texts(at)
    assert "has at most 32 orthogonal keys" not in text
    assert "φ = elu + 1" in text and "no two φ(k) are orthogonal" in text
    assert "optimistic bound" in text
    titles = [el.spec["layout"]["title"]["text"] for el in plotly_charts(at)]
    capacity = next(t for t in titles if "random unit keys" in t)
    assert "optimistic bound" in capacity, capacity


def test_the_encoder_decoder_lesson_credits_cho_and_sutskever_as_they_wrote():
    """Item 16: Sutskever et al. start the decoder from c; Cho et al. feed c at every
    step. The old sentence cited both for reading c at every step."""
    at = open_page("encoder-decoder")
    first = next(el.value for el in at.markdown if "context vector" in el.value)
    assert "(Cho et al. 2014; Sutskever" not in first
    assert "Sutskever et al. (2014) give c to the decoder only as its initial state" in first
    assert "Cho et al. (2014) also feed c at every step" in first


def test_step_3_states_when_scaling_by_root_d_gives_variance_one():
    """Item 17: Var(qᵀk/√d) = 1 holds for independent unit-variance entries of q and k."""
    step = _points(3)
    assert "keeps the scores' variance at 1 whatever d is" not in step
    assert "independent with mean 0 and variance 1" in step


@pytest.mark.parametrize("present", ["0", "1"])
def test_step_1_notes_describe_what_is_drawn(present):
    """Item 18: presenting, step 1 draws no row bars and its notes sit under the figure:
    the notes must not send the class "below" to a row that is not there."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"present": present, "step": "1"})
    at = open_page("lecture", at.run())
    assert not at.exception, [e.value for e in at.exception]
    notes = " ".join(el.value for el in at.markdown if "**query**" in el.value)
    assert "Below" not in notes and "bottom row" in notes, notes
    figure = plotly_charts(at)[0].spec
    bars = [t for t in figure["data"] if t["type"] == "bar"]
    assert bool(bars) == (present == "0")  # the row bars only outside presenter mode


def test_step_6_speaks_of_causal_models():
    """Item 19: in these causal models a token reaches only earlier tokens and itself,
    and the mask already breaks attention's symmetry under permutation."""
    step = _points(6)
    assert "every token reaches every other" not in step
    assert "Attention ignores order" not in step
    assert "causal models every earlier one and itself" in step
    assert "causal mask already breaks that symmetry" in step


@pytest.mark.parametrize("present", ["0", "1"])
def test_step_13_says_how_recall_is_counted_and_what_was_trained(present):
    """#46: the delta-rule step's recall is the card's top token over the whole vocabulary,
    the ranking rule beside it, and it says that the three models practised the format
    alike, one recipe (their cards' recall_share), presenting or not."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"present": present, "step": "13"})
    at = open_page("lecture", at.run())
    assert not at.exception, [e.value for e in at.exception]
    step = _points(13)
    assert "top token over the whole vocabulary" in step and "ranking rule" in step
    assert "One recipe" in step
    said = _texts(at)
    assert (
        "What was trained: all three (softmax, linear and delta) with 25% of each batch's" in said
    )
    assert "the curves compare the architectures" in said
    assert "Recall is counted as the top token over the whole vocabulary" in said
    figure = next(el.spec for el in plotly_charts(at) if el.key == "lecture_recall")
    names = {t["name"] for t in figure["data"]}
    assert {
        "softmax, top token",
        "delta, ranking rule",
        "linear, top token, held-out words",
    } <= names


def test_the_sidebars_card_counts_recall_as_the_top_token_and_says_what_was_trained():
    """#46: the model card in the sidebar gives the top-token share first, the ranking
    rule's beside it, and whether the model was trained with recall rows."""
    import json

    from tests.helpers import EXPORTED

    card = json.loads((EXPORTED / "model_card.json").read_text(encoding="utf-8"))
    for kind, trained in (("delta", "with 25% synthetic recall rows in this format"),
                          ("softmax", "with 25% synthetic recall rows in this format")):  # fmt: skip
        at = AppTest.from_file(APP, default_timeout=120)
        at.query_params["model"] = kind
        at.run()
        line = next(m.value for m in at.sidebar.markdown if "associative recall" in m.value)
        recall = card["models"][kind]["probes"]["recall"]
        top, rank = recall["top_token"]["16"], recall["ranking"]["16"]
        assert (
            f"n = 16: {top:.0%} (top token over the whole vocabulary; {rank:.0%} by the ranking rule"
            in line
        )
        assert line.endswith(f"trained {trained}"), line
