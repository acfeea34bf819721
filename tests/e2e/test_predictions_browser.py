"""The Predictions view in headless Chromium (#44 items 12 and 21): the decoding rule's
controls sit over the next-token bars they reshape, and "Use as the sentence" after
Generate makes the generated text the sentence."""

from __future__ import annotations

import pytest

from tests.helpers.browser import wait_idle, wait_plot

BARS = ".st-key-topk .js-plotly-plot"
TITLE_JS = f"() => document.querySelector('{BARS}')?.layout?.title?.text"


def _in_view(page, selector: str) -> bool:
    box = page.locator(selector).first.bounding_box()
    height = page.viewport_size["height"]
    return box is not None and box["y"] >= 0 and box["y"] + 60 <= height


@pytest.mark.parametrize("present", ["0", "1"])
def test_temperature_reshapes_the_bars_in_view_at_1280_by_720(page, server_url, present):
    """Moving the temperature changes the bars on the same screen (under the table the
    controls were 600 px below the bars they reshape); presenting, the whole bar chart
    fits above the fold with the controls over it."""
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{server_url}/visualizer?view=predict&present={present}")
    wait_idle(page)
    wait_plot(page, "topk")
    page.get_by_text("sample", exact=True).click()
    wait_idle(page)
    before = page.evaluate(TITLE_JS)
    temperature = page.locator(".st-key-gen_temperature input[type=range]")
    temperature.press("End")  # scrolls the slider into view, temperature 2
    wait_idle(page)
    page.wait_for_function(f"({TITLE_JS})()?.includes('temperature 2,')")
    assert "temperature 1," in before, before
    assert _in_view(page, ".st-key-gen_temperature") and _in_view(page, BARS)
    if present == "1":
        page.evaluate("window.scrollTo(0, 0)")
        box = page.locator(BARS).bounding_box()
        assert box["y"] + box["height"] <= 720, box


def test_use_as_the_sentence_after_generate_makes_it_the_sentence(page, server_url):
    page.goto(f"{server_url}/visualizer?view=predict")
    wait_idle(page)
    box = page.get_by_role("textbox", name="Type a sentence")
    before = box.input_value()
    position = page.locator(".st-key-pred_pos input[type=range]")
    last = int(position.get_attribute("max"))  # T - 1
    page.get_by_role("button", name="Generate").click()
    wait_idle(page)
    generated = page.locator('[data-testid="stAlertContentSuccess"] p').first.inner_text()
    generated = generated.split("\n")[0].strip()
    assert len(generated.split()) > len(before.split()), (before, generated)
    page.get_by_role("button", name="Use as the sentence").click()
    wait_idle(page)
    page.wait_for_function(
        "(t) => document.querySelector('textarea[aria-label=\"Type a sentence\"]').value === t",
        arg=generated,
    )
    # the sentence is the T tokens and the 10 generated (the slider's default), no other
    page.wait_for_function("(n) => document.querySelector("
                           "'.st-key-pred_pos input[type=range]').max === String(n)",
                           arg=last + 10)  # fmt: skip
    assert not page.locator('[data-testid="stException"]').count()


LABELS_JS = """() => document.querySelector('.st-key-attn_big .js-plotly-plot')?.data?.[0]?.x"""


def test_a_generated_continuation_is_inspected_with_its_ids_in_the_attention_view(page, server_url):
    """#48 item 5: after Generate and "Use as the sentence", the attention view shows the
    sentence and its continuation, token for token the ids the model generated (greedy:
    the same ids this test's own run of the shipped graphs makes), although its text,
    tokenized again, gives other ids (the emoji's ``[UNK]`` reads back as three tokens)."""
    from pathlib import Path
    from urllib.parse import quote

    from inference.runtime import load_shipped
    from models.tokenizer import encode, sentence_text

    text = "the 🦄 cat . the 🦄 cat . the"
    model = load_shipped(Path(__file__).resolve().parents[2] / "exported", "softmax")
    ids = encode(model.tokenizer, text).ids
    new, _ = model.generate(ids, 10)  # what Generate makes, greedy, 10 tokens
    continued = sentence_text(model.tokenizer, ids + new)
    assert encode(model.tokenizer, continued).ids != ids + new  # typed again: other ids
    page.goto(f"{server_url}/visualizer?view=predict&text={quote(text)}")
    wait_idle(page)
    page.get_by_role("button", name="Generate").click()
    wait_idle(page)
    page.get_by_role("button", name="Use as the sentence").click()
    wait_idle(page)
    page.locator(".st-key-view").get_by_text("attention", exact=True).click()
    wait_idle(page)
    wait_plot(page, "attn_big")
    page.wait_for_function(f"({LABELS_JS})()?.length === {len(ids) + len(new)}")
    labels = page.evaluate(LABELS_JS)  # "0·the", "1·[UNK]", ...
    shown = [model.tokenizer.token_to_id(label.split("·", 1)[1]) for label in labels]
    assert shown == ids + new, (labels, new)
    assert page.get_by_text("token ids as generated").count()  # and the page says so
    assert not page.locator('[data-testid="stException"]').count()


# The first paint of the bars, drawn before plotly.js is there (ui/preview.js).
FIRST_PAINT_JS = """() => new Promise(done => { const t0 = performance.now();
  const look = () => {
    const box = document.querySelector('.st-key-topk .attnviz-preview, .st-key-topk .main-svg');
    box && box.getBoundingClientRect().height > 100 ? done(performance.now() - t0)
      : requestAnimationFrame(look); };
  look(); })"""
PREVIEW_LABELS_JS = """() => Array.from(document.querySelectorAll(
  '.st-key-topk .attnviz-preview > div:last-child > span'), s => s.textContent)"""


@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)], ids=["1280x720", "1920x1080"])
def test_the_bars_are_on_screen_when_the_run_ends_while_plotly_loads(browser, server_url, size):
    """#44 item 7: presenting, the Predictions view opened from a link was a 500 px blank
    for over a second after its run had ended, plotly.js still loading and evaluating. The
    bars are drawn at once as HTML (the title, each token and its probability), within
    0.8 s of the run's end (scaled to a busy machine), and plotly's chart then replaces
    them with the same tokens. A fresh browser context: no plotly.js cached or running."""
    from tests.helpers.slow import FACTOR, measure

    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    page = context.new_page()
    try:
        page.goto(f"{server_url}/visualizer?present=1&view=predict")
        page.locator(".st-key-pred_pos").wait_for(state="attached")  # the view's run began
        page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]')
        first_paint_ms = page.evaluate(FIRST_PAINT_JS)
        previewed = page.evaluate(PREVIEW_LABELS_JS)  # [] when plotly.js was quicker
        wait_plot(page, "topk")
        page.wait_for_function("() => !document.querySelector('.st-key-topk .attnviz-preview')")
        drawn = page.evaluate(f"() => Array.from(document.querySelector('{BARS}')._fullData[0].y)")
        # the factor now, not at the worker's start: the load may have come since (a run
        # with two browsers at once met 852 ms with the start's factor of 1.0)
        factor = max(FACTOR, measure())
        assert first_paint_ms <= 800 * factor, (first_paint_ms, factor)
        assert previewed in ([], drawn), (previewed, drawn)
        assert len(drawn) == 8, drawn
    finally:
        context.close()
