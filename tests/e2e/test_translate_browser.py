"""End to end in headless Chromium: the translation page as a student uses it."""

from __future__ import annotations

from corpus.translation import translate
from tests.helpers.browser import wait_idle

SENTENCE = "the big dog saw a small cat near the park ."


def _type(page, text: str) -> None:
    box = page.get_by_label("English sentence")
    box.fill(text)
    box.press("Enter")
    wait_idle(page)


def test_type_a_sentence_see_its_translation_alignment_and_one_step(page, server_url):
    page.goto(f"{server_url}/translate")
    wait_idle(page)
    page.get_by_role("heading", name="Translate: English → Tokan", level=1).wait_for()
    _type(page, SENTENCE)
    gold = " ".join(translate(SENTENCE.split()).target)
    body = page.inner_text("body")
    assert not page.locator('[data-testid="stException"]').count()
    assert "Transformer" in body and "GRU + Bahdanau attention" in body
    grid = page.locator('[data-testid="stDataFrame"]').first
    grid.wait_for()
    assert "gold (the rules)" in grid.inner_text() or gold.split()[0] in page.content()
    chart = page.locator(".st-key-align_bahdanau .js-plotly-plot .main-svg").first
    chart.wait_for()
    assert chart.is_visible()
    page.get_by_role("radio", name="steps").click()
    wait_idle(page)
    page.get_by_text("Teacher forcing: it reads the gold previous word").wait_for()
    page.locator(".st-key-step_attn_free .js-plotly-plot").first.wait_for()
    assert "reads <bos>" in page.inner_text("body")
    assert not page.locator('[data-testid="stException"]').count()
