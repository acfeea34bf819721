"""The app script under streamlit.testing.v1.AppTest, on the shipped models."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from models.config import SHIPPED_KINDS
from tests.helpers import ROOT
from tests.helpers.charts import plotly_charts
from ui.visualizer import VIEWS

APP = str(ROOT / "app.py")


def new_app(**params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in params.items():
        at.query_params[key] = str(value)
    return at.run()


def plotly_specs(at: AppTest) -> list[dict]:
    return [el.spec for el in plotly_charts(at)]


def decode(z) -> np.ndarray:
    """Plotly's JSON array, plain or typed ({"dtype", "bdata", "shape"})."""
    if isinstance(z, dict):
        flat = np.frombuffer(base64.b64decode(z["bdata"]), dtype=np.dtype(z["dtype"]))
        shape = z.get("shape")  # absent for a 1-D array
        return flat if shape is None else flat.reshape([int(n) for n in str(shape).split(",")])
    return np.asarray(z, dtype=float)


def heatmap_z(at: AppTest) -> list[np.ndarray]:
    return [
        decode(t["z"]) for spec in plotly_specs(at) for t in spec["data"] if t["type"] == "heatmap"
    ]


def differ(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape != b.shape or not np.allclose(a, b)


def no_errors(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


@pytest.fixture(scope="module")
def app() -> AppTest:
    return new_app()


@pytest.mark.parametrize("view", list(VIEWS))
def test_default_sentence_renders_every_view(app, view):
    app.segmented_control(key="view").set_value(view).run()
    no_errors(app)
    assert plotly_charts(app) or app.get("vega_lite_chart") or app.dataframe


def test_sentence_model_layer_head_change_the_figures():
    at = new_app(view="attention")
    before = heatmap_z(at)
    at.text_area(key="text").set_value("the cat sat on the mat .").run()
    no_errors(at)
    after_text = heatmap_z(at)
    assert after_text[0].shape == (7, 7) and differ(after_text[0], before[0])
    assert np.allclose(after_text[0].sum(1), 1.0, atol=1e-5)  # rows of the big heatmap
    at.selectbox(key="head").set_value(1).run()
    after_head = heatmap_z(at)
    assert differ(after_head[0], after_text[0])
    at.selectbox(key="layer").set_value(1).run()
    after_layer = heatmap_z(at)
    assert differ(after_layer[0], after_head[0])
    at.radio(key="model").set_value("linear").run()
    no_errors(at)
    assert differ(heatmap_z(at)[0], after_layer[0])


def test_a_new_sentence_asks_about_its_last_token():
    """The query row under the heatmap is the picked query's, and a new sentence starts at
    its own last token (the picked index of the old sentence would name another token)."""
    at = new_app(view="attention", text="the cat sat on the mat .")
    at.selectbox(key="query_token").set_value(2).run()
    heat, bars, _click, _columns = plotly_specs(at)[0]["data"]  # and the click layers
    np.testing.assert_allclose(decode(bars["y"]), decode(heat["z"])[2], atol=1e-6)
    at.text_area(key="text").set_value("the old man walked home").run()
    no_errors(at)
    query = at.selectbox(key="query_token")
    assert query.value == 4 and query.format_func(query.value) == "4: home"
    at.selectbox(key="query_token").set_value(1).run()
    assert at.selectbox(key="query_token").value == 1  # kept while the sentence stays


def test_query_parameters_restore_state():
    at = new_app(text="the dogs are in the park .", model="linear", layer=2, head=3, view="mask")
    no_errors(at)
    assert at.text_area(key="text").value == "the dogs are in the park ."
    assert at.radio(key="model").value == "linear"
    assert at.selectbox(key="layer").value == 2
    assert at.selectbox(key="head").value == 3
    assert at.segmented_control(key="view").value == "mask"
    assert any("recurrent" in m.label for m in at.metric)


def test_invalid_query_parameters_fall_back():
    at = new_app(model="gpt5", layer=99, head="x", view="nope")
    no_errors(at)
    assert at.radio(key="model").value == "softmax"
    assert at.selectbox(key="layer").value == 0
    assert at.segmented_control(key="view").value == "attention"


def test_a_link_to_an_upload_says_where_it_lives_and_opens_the_uploader():
    at = new_app(model="upload", view="attention")
    no_errors(at)
    assert at.radio(key="model").value == "softmax"
    (warning,) = [w.value for w in at.warning if "model" in w.value and "upload" in w.value]
    assert "lives only in the browser session that uploaded it" in warning
    (uploader,) = [e for e in at.expander if e.label == "Inspect your own model"]
    assert uploader.proto.expanded


@pytest.mark.parametrize(
    "text, notice",
    [
        ("", "Type a sentence"),
        ("   \n\t", "Type a sentence"),
        ("word " * 4000, "only the first"),
        ("😀🎉 the cat", "split into pieces"),
        ("שלום עולם the cat", "split into pieces"),
        ("the\x00 cat\x07 sat", "control character"),
        ("<img src=x onerror=alert(1)>", "split into pieces"),
    ],
)
def test_bad_inputs_give_notices_not_exceptions(text, notice):
    at = new_app()
    at.text_area(key="text").set_value(text).run()
    no_errors(at)
    shown = " ".join(x.value for x in [*at.info, *at.warning])
    assert notice in shown
    if notice == "Type a sentence":
        return  # nothing to show until there are tokens
    for view in VIEWS:  # every view survives the odd input
        at.segmented_control(key="view").set_value(view).run()
        no_errors(at)


def test_example_sentence_sets_text():
    at = new_app()
    at.selectbox(key="example").set_value("Pronouns").run()
    assert at.text_area(key="text").value.startswith("Mary lost her keys")


def test_generate_extends_the_sentence():
    at = new_app(model="linear", view="predict", text="the cat")
    at.button(key="generate").click().run()
    no_errors(at)
    assert any(s.value.startswith("the cat") and len(s.value) > 12 for s in at.success)


def generated(at: AppTest) -> tuple[str, list]:
    """The generated text and the table of (token, p) rows under it."""
    (success,) = at.success
    table = at.dataframe[-1].value
    return success.value, list(zip(table["token"], table["p"], strict=True))


def test_sampling_is_seeded_and_each_token_has_its_probability():
    at = new_app(model="softmax", view="predict", text="the cat")
    at.button(key="generate").click().run()
    greedy_text, greedy_rows = generated(at)
    assert "greedy" in greedy_text and len(greedy_rows) == 10
    assert all(0.0 < p <= 1.0 for _, p in greedy_rows)
    at.radio(key="gen_mode").set_value("sample").run()
    at.number_input(key="gen_top_k").set_value(1).run()  # top-1 sampling is greedy
    at.button(key="generate").click().run()
    assert generated(at)[1] == greedy_rows
    at.number_input(key="gen_top_k").set_value(0).run()
    at.slider(key="gen_temperature").set_value(2.0).run()
    at.number_input(key="gen_seed").set_value(5).run()
    at.button(key="generate").click().run()
    first = generated(at)
    assert "temperature 2, seed 5" in first[0] and first[1] != greedy_rows
    at.button(key="generate").click().run()
    assert generated(at) == first  # the same seed, the same tokens
    no_errors(at)


def test_generation_stops_at_the_context_with_a_notice():
    at = new_app(model="linear", view="predict", text=" ".join(["the cat sat ."] * 15))  # 60
    at.button(key="generate").click().run()
    no_errors(at)
    assert any("Stopped at the model's context of 64 tokens: 4 of 10" in i.value for i in at.info)
    assert len(generated(at)[1]) == 4


def test_recurrent_metric_is_small():
    at = new_app(model="linear", view="mask")
    value = float(next(m.value for m in at.metric if "recurrent" in m.label))
    assert value <= 1e-4


@pytest.mark.parametrize("kind", SHIPPED_KINDS)
def test_model_card_shows_the_cards_smallest_row_sum(kind):
    card = json.loads((ROOT / "exported" / "model_card.json").read_text(encoding="utf-8"))
    figure = card["models"][kind]["probes"]["min_row_sum"]
    at = new_app(model=kind)
    no_errors(at)
    shown = [m.value for m in at.sidebar.markdown if "smallest attention row sum" in m.value]
    assert shown == [f"smallest attention row sum on held-out lines {figure:.3f}"]


def test_provider_is_shown():
    at = new_app()
    assert any("ExecutionProvider" in c.value for c in at.sidebar.caption)


@pytest.mark.slow
def test_viewing_path_imports_no_torch():
    """The app starts fast: rendering every view on the shipped models never imports torch."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from streamlit.testing.v1 import AppTest\n"
        f"at = AppTest.from_file({APP!r}, default_timeout=120).run()\n"
        f"for view in {list(VIEWS)!r}:\n"
        "    at.segmented_control(key='view').set_value(view).run()\n"
        "    assert not at.exception, view\n"
        "print('torch' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "False"


def test_row_sum_caption_is_measured():
    from ui.attention_view import row_sum_note

    T = 5
    softmax_rows = np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]
    assert row_sum_note(softmax_rows, "linear", 1e-6) == "Each row sums to 1."
    shrunk = softmax_rows * np.linspace(1.0, 0.2, T)[:, None]  # eps-dominated rows
    note = row_sum_note(shrunk, "linear", 1e-6)
    assert "between 0.200 and 1.000" in note and "1e-06" in note


def test_compare_says_heads_do_not_correspond():
    """#20 item 7: two separately trained models' head h are not the same head."""
    at = new_app(view="compare")
    no_errors(at)
    captions = " ".join(c.value for c in at.caption)
    assert "heads do not correspond" in captions


def test_the_recurrence_slider_sits_in_the_section_it_controls():
    """#20 item 9: the slider of token i is drawn under the recurrent section's heading,
    after the mask panels it does not control; y_i is not alone in its row (beside it:
    the measured equivalence of the two forms)."""
    at = new_app(model="linear", view="mask")
    no_errors(at)
    order = [
        el.key or el.value if el.type in ("slider", "subheader") else getattr(el, "key", None)
        for el in at.main
        if el.type in ("slider", "subheader", "bidi_component")
    ]
    rnn = next(o for o in order if str(o).startswith("Linear attention as an RNN"))
    assert order.index("mask_panels") < order.index(rnn) < order.index("rec_step")
    assert order.index("rec_step") < order.index("rec_state")
    rows = [b for b in at.main if b.type == "flex_container"]
    row_of_y = next(r for r in rows if any(getattr(e, "key", None) == "rec_y" for e in r))
    assert [e for e in row_of_y if e.type == "metric"], "y_i shares its row with the check"


def test_predictions_open_on_the_last_position_with_a_next_word():
    """#20 item 11: the view opens at T - 2 (default sentence: "to", predicting "mary"),
    not after the final full stop, where there is no next word to compare with."""
    at = new_app(view="predict")
    no_errors(at)
    slider = at.select_slider(key="pred_pos")
    tokens = at.dataframe[0].value["token"].tolist()
    assert slider.value == len(tokens) - 2
    table = at.dataframe[0].value
    assert table["#1 next"].iloc[slider.value] == tokens[-2 + 1]  # it predicts the next word


def test_the_block_view_draws_the_chosen_layers_numbers_from_the_graph():
    """#21 item 2 as a visualizer view (``?view=block``): layer 1's bars are the norms of
    the graph's ``blocks.1.attn.out`` and ``mlp.out``; another layer draws other numbers."""
    from inference.analysis import analyze
    from inference.block import block_numbers, block_outputs
    from ui import loaders

    at = new_app(view="block", model="linear", layer=1)
    no_errors(at)
    bars = plotly_specs(at)[0]
    assert bars["layout"]["title"]["text"].startswith("Block 1")
    model = loaders.shipped_model("linear")
    result = analyze(model, at.text_area(key="text").value, recurrent=False)
    nums = block_numbers(block_outputs(model, result.ids, 1))
    np.testing.assert_allclose(decode(bars["data"][0]["y"]), nums.norms["attn.out"], rtol=1e-5)
    np.testing.assert_allclose(decode(bars["data"][1]["y"]), nums.norms["mlp.out"], rtol=1e-5)
    at.selectbox(key="layer").set_value(0).run()
    no_errors(at)
    assert differ(decode(plotly_specs(at)[0]["data"][0]["y"]), nums.norms["attn.out"])
