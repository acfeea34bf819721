"""End to end in headless Chromium: type a sentence, see its heads and the recurrent view."""

from __future__ import annotations

import re
import urllib.parse

from tests.e2e.conftest import SCREENSHOTS, wait_idle


def type_sentence(page, text: str) -> None:
    box = page.get_by_role("textbox", name="Type a sentence")
    box.fill(text)
    box.press("Control+Enter")
    wait_idle(page)


def plot_text(page) -> str:
    return " ".join(page.locator(".js-plotly-plot").all_inner_texts())


def test_type_sentence_and_see_heads_and_recurrence(page, server_url):
    page.goto(server_url)
    wait_idle(page)
    type_sentence(page, "the blorf sat on the mat")
    page.wait_for_selector(".js-plotly-plot")
    text = plot_text(page)
    assert "blorf" not in text  # unknown word: split into pieces, each flagged with *
    assert "1·b*" in text and re.search(r"\d·sat", text) and re.search(r"\d·mat", text)
    assert "split into pieces" in page.inner_text("body")
    assert "blorf" in urllib.parse.unquote_plus(page.url)

    page.get_by_text("Causal mask & recurrence").click()
    wait_idle(page)
    body = page.inner_text("body")
    assert "State S_" in body and "max |recurrent − parallel|" in body
    assert "view=mask" in page.url
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "mask_view.png"), full_page=True)
    assert not page.locator('[data-testid="stException"]').count()


def test_html_payload_fires_no_dialog(page, server_url):
    page.goto(server_url)
    wait_idle(page)
    type_sentence(page, "<img src=x onerror=alert(1)> the cat")
    page.wait_for_selector(".js-plotly-plot")
    page.wait_for_timeout(1000)
    assert page.dialogs == []
    assert page.locator("img[src=x]").count() == 0
    assert not page.locator('[data-testid="stException"]').count()
    page.screenshot(path=str(SCREENSHOTS / "attention_view.png"), full_page=True)


def test_shared_link_opens_exact_view(page, server_url):
    query = urllib.parse.urlencode(
        {
            "text": "the cat sat on the mat",
            "model": "linear",
            "layer": 1,
            "head": 2,
            "view": "heads",
        }
    )
    page.goto(f"{server_url}/?{query}")
    wait_idle(page)
    body = page.inner_text("body")
    assert "previous_token" in body  # the head statistics table
    assert "Linear attention" in body
    assert "view=heads" in page.url and "model=linear" in page.url
