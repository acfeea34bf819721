"""End to end in headless Chromium: type a sentence, see its heads and the recurrent view."""

from __future__ import annotations

import re
import urllib.parse

import pytest

from tests.helpers.browser import SCREENSHOTS, open_dropdown, wait_idle
from ui.visualizer import VIEWS
from upload.errors import UploadError
from upload.intake import expect_format


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
    numbers = page.locator(".st-key-attn_big_numbers")  # the heatmap's numbers, built on opening
    assert numbers.locator('[data-testid="stTable"]').count() == 0
    numbers.get_by_text("Show the numbers").click()
    wait_idle(page)
    rows = numbers.locator('[data-testid="stTable"] tbody tr')
    rows.first.wait_for()
    header = numbers.locator('[data-testid="stTable"] thead').inner_text()
    assert "1·b*" in header and rows.count() == header.count("·")

    page.locator(".st-key-view").get_by_text("mask", exact=True).click()
    wait_idle(page)
    page.get_by_text("max |recurrent − parallel|").first.wait_for()
    page.locator(".js-plotly-plot", has_text="State S_").first.wait_for()
    body = page.inner_text("body") + plot_text(page)
    assert "State S_" in body and "max |recurrent − parallel|" in body
    assert "view=mask" in page.url  # the bound control wrote its value into the URL
    assert "Causal mask & recurrence" in body  # the view's name heads it
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


def upload_files(page, server_url, paths) -> None:
    """Open the app, upload ``paths`` through the sidebar's uploader and load them."""
    page.goto(server_url)
    wait_idle(page)
    page.get_by_text("Inspect your own model").click()
    page.locator('[data-testid="stFileUploader"] input[type=file]').set_input_files(
        [str(p) for p in paths]
    )
    page.get_by_role("button", name="Load uploaded model").click()
    wait_idle(page)
    page.wait_for_selector("text=Uploaded")
    assert page.get_by_role("radio", name="upload").is_checked()
    assert "model=upload" in page.url


# Issue #50: a refused file whose name holds markdown characters. Chromium sends the
# file's base name as it is on disk (a backslash included, on Linux).
MARKDOWN_NAME = "a*b*_c_\\d`e`$x$ ~s~ [l](u) <i>1. **k**.safetensors"
MARKUP = "em, strong, code, a, img, i, del, .katex, [data-testid=stIconMaterial]"


def test_a_refused_file_name_reads_exactly_as_written(page, server_url, tmp_path):
    """The one line of a refusal reads in the browser exactly as the code wrote it: no
    backslash added, nothing bold, italic, code, LaTeX, link or HTML made of the name."""
    data = b"\x10" + bytes(7) + b'{"x":'  # a safetensors header cut short
    with pytest.raises(UploadError) as refused:
        expect_format(MARKDOWN_NAME, data)
    path = tmp_path / MARKDOWN_NAME
    path.write_bytes(data)
    page.goto(server_url)
    wait_idle(page)
    page.get_by_text("Inspect your own model").click()
    page.locator('[data-testid="stFileUploader"] input[type=file]').set_input_files(str(path))
    page.get_by_role("button", name="Load uploaded model").click()
    wait_idle(page)
    alert = page.locator('[data-testid="stAlert"]', has_text="Not loaded")
    assert alert.inner_text().strip() == f"Not loaded: {refused.value}"
    assert MARKDOWN_NAME in alert.inner_text()
    assert alert.locator(MARKUP).count() == 0


def test_server_log_is_clean(page, server):
    """No onnxruntime CUDA error spam or tracebacks in the terminal on a CPU-only machine."""
    page.goto(server.url)
    wait_idle(page)
    log = server.log()
    assert "[E:onnxruntime" not in log and "Traceback" not in log, log[-2000:]


def shown_head(page) -> dict:
    """The big heatmap and its query row's bars (one figure) as plotly.js holds them."""
    return page.evaluate(
        """() => {
            const plot = (key) => document.querySelector(`.st-key-${key} .js-plotly-plot`);
            const big = plot("attn_big");
            return {
                title: big.layout.title.text,
                z: JSON.stringify(big.data[0].z),
                row: JSON.stringify(big.data[1].y),
            };
        }"""
    )


COUNT_DRAWS_JS = """() => {
    const gd = document.querySelector('.st-key-attn_big .js-plotly-plot');
    window.__big = gd;
    gd.__draws = 0;
    gd.on('plotly_afterplot', () => (gd.__draws += 1));
}"""
DRAWS_JS = """() => {
    const gd = document.querySelector('.st-key-attn_big .js-plotly-plot');
    const seen = [gd === window.__big, gd.__draws];
    gd.__draws = 0;
    return seen;
}"""


def test_every_head_of_a_layer_draws_its_own_figures(page, server_url):
    """Click through every head of layer 1: each click redraws the big heatmap and the
    query's row bars under it with that head's weights, different from every other head's;
    the chart is the same element throughout and draws twice per click (ui.chart: the
    picked head at once from the figure, then the server's figure of it; Streamlit's
    own chart made a new element and drew it three times)."""
    query = urllib.parse.urlencode(
        {"text": "the old man walked home . the old man walked home .", "layer": 1, "head": 0}
    )
    page.goto(f"{server_url}/visualizer?{query}")
    wait_idle(page)
    page.wait_for_function(
        "() => document.querySelector('.st-key-attn_big .js-plotly-plot')?.layout?.title"
    )
    seen = {0: shown_head(page)}
    page.evaluate(COUNT_DRAWS_JS)
    open_dropdown(page, page.locator(".st-key-head"))
    n_heads = page.get_by_role("option").count()  # the model's heads: 0 .. H-1
    page.keyboard.press("Escape")
    assert n_heads >= 2
    for head in range(1, n_heads):
        open_dropdown(page, page.locator(".st-key-head"))
        page.get_by_role("option", name=str(head), exact=True).click()
        title = f"Layer 1, head {head}"
        page.wait_for_function(
            "(t) => document.querySelector('.st-key-attn_big .js-plotly-plot')"
            "?.layout?.title?.text === t",
            arg=title,
        )
        page.wait_for_function("() => window.__big.__draws >= 2")
        wait_idle(page)
        assert page.evaluate(DRAWS_JS) == [True, 2], "one element, drawn twice per click"
        seen[head] = shown_head(page)
        assert seen[head]["title"] == title
        assert f"head={head}" in page.url
    assert len({s["z"] for s in seen.values()}) == n_heads  # every head its own weights
    assert len({s["row"] for s in seen.values()}) == n_heads
    # a window narrower than the figure: the chart takes the new width, its cells still
    # square (ui/square.js sizes the figure again: #44 item 1)
    width = page.evaluate("() => window.__big._fullLayout.width")
    page.set_viewport_size({"width": 1000, "height": page.viewport_size["height"]})
    page.wait_for_function("(w) => window.__big._fullLayout.width < w", arg=width)
    page.wait_for_function(
        """() => { const f = window.__big._fullLayout, x = f.xaxis, y = f.yaxis;
          const w = x._length / Math.abs(x.range[1] - x.range[0]);
          return Math.abs(w / (y._length / Math.abs(y.range[1] - y.range[0])) - 1) <= 0.02; }"""
    )
    assert not page.locator('[data-testid="stException"]').count()


def test_the_delta_model_in_its_views_and_the_forgetting_lesson(page, server_url):
    """#22: the third shipped model as a student meets it: its mask view steps "erase,
    then write" beside the additive state, the compare view puts it beside another
    model, and the lesson runs the recall test on the three models."""
    page.goto(f"{server_url}/?model=delta&view=mask")
    wait_idle(page)
    page.get_by_text("The delta rule as an RNN").first.wait_for()
    page.locator(".js-plotly-plot", has_text="write: β k").first.wait_for()
    body = page.inner_text("body")
    assert "Linear attention as an RNN" in body and "can be negative" in body
    page.locator(".st-key-view").get_by_text("compare", exact=True).click()
    wait_idle(page)
    page.locator(".st-key-cmp_delta .js-plotly-plot").wait_for()
    page.locator(".st-key-cmp_linear .js-plotly-plot").wait_for()
    assert "Shipped delta model" in page.inner_text("body")
    for view in ("attention", "shapes", "positional", "block", "predict", "stats"):
        page.locator(".st-key-view").get_by_text(view, exact=True).click()
        wait_idle(page)
        page.get_by_role("heading", name=VIEWS[view]).wait_for()
        assert not page.locator('[data-testid="stException"]').count(), view
    page.goto(f"{server_url}/forgetting?recall_pairs=16")
    wait_idle(page)
    page.locator(".st-key-forget_answers .js-plotly-plot").wait_for()
    body = page.inner_text("body")
    for kind in ("softmax", "linear", "delta"):
        assert f"{kind} answers" in body
    assert "The sequence (33 tokens)" in body  # 16 pairs and the query
    page.screenshot(path=str(SCREENSHOTS / "forgetting.png"), full_page=True)
    assert not page.locator('[data-testid="stException"]').count()
