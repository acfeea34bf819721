"""Figures that leave the app (#48 item 3), under AppTest on the shipped models: a view's
HTML file holds plotly.js and the figures the page drew, and loads nothing; a view's .npz
holds the arrays the view shows with a manifest that matches them; a Vega-Lite chart's SVG
parses and its PNG is a PNG. The files are made as a click makes them
(``tests/helpers/downloads.py``). The browser side: ``tests/e2e/test_figures_leave_browser.py``."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import numpy as np
import pytest

from tests.helpers.charts import plotly_charts
from tests.helpers.downloads import buttons, file_of, record_deferred
from tests.ui.test_app import new_app, no_errors
from ui import loaders
from ui.figures import PLOT_CONFIG, Drawn, encode, plot_config
from ui.view_files import plotly_js, view_html
from viz import spec as vspec

HTML = "This view as one HTML file"


class Tags(HTMLParser):
    """Every start tag of a page with its attributes (a script's text is not parsed)."""

    def __init__(self, text: str):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def npz_of(at, kept, names: str):
    data, file_name, _ = file_of(at, kept, names)
    archive = np.load(io.BytesIO(data), allow_pickle=False)
    return archive, json.loads(archive["manifest.json"]), file_name


def test_each_chart_names_its_image_files_after_its_key():
    assert plot_config(None) is PLOT_CONFIG
    image = plot_config("attn_big")["toImageButtonOptions"]
    assert image == {"format": "png", "scale": 2, "filename": "attnviz_attn_big"}
    assert "filename" not in PLOT_CONFIG["toImageButtonOptions"]  # not changed in place


def test_the_attention_view_as_html_and_npz(monkeypatch):
    kept = record_deferred(monkeypatch)
    at = new_app(model="softmax", layer=1, head=3)
    no_errors(at)
    html, file_name, mime = file_of(at, kept, HTML)
    assert file_name == "attnviz_attention_softmax.html" and mime == "text/html"
    text = html.decode()
    assert plotly_js() in text and "plotly.js v4" in text  # inlined, whole
    tags = Tags(text).tags
    assert [a for t, a in tags if t == "script" and "src" in a] == []  # nothing fetched
    assert not [a for t, a in tags if t == "link"]
    figures = [a["id"] for t, a in tags if t == "div" and a.get("class") == "figure"]
    charts = plotly_charts(at)
    assert len(figures) == len(charts) >= 2  # the heatmap and the grid of heads
    raw = json.loads(text[text.index("const FIGURES = ") + 16 : text.index(";\nconst VEGA")])
    assert [item["figure"] for item in raw] == [c.spec for c in charts]  # as the page drew them
    assert raw[0]["config"]["toImageButtonOptions"]["filename"] == "attnviz_attn_big"
    assert "Layer 1, head 3" in text
    text_typed = at.text_area(key="text").value
    result = loaders.get_analysis("softmax", text_typed)
    archive, manifest, name = npz_of(at, kept, "attn, scores in one .npz")
    assert name == "attention.npz"
    assert set(archive.files) == {"attn", "scores", "manifest.json"}
    np.testing.assert_array_equal(archive["attn"], result.outputs["attn"])
    for key, entry in manifest["arrays"].items():
        assert tuple(entry["shape"]) == archive[key].shape and entry["dtype"] == "float32"
    assert manifest["arrays"]["attn"]["axes"] == ["layer", "head", "query", "key"]
    assert (manifest["model"], manifest["layer"], manifest["head"]) == ("softmax", 1, 3)
    assert manifest["sentence"] == result.text and manifest["token_ids"] == result.ids
    assert manifest["view"] == "attention" and manifest["query"] == result.T - 1


@pytest.mark.slow
def test_every_view_that_draws_has_its_html_and_its_arrays(monkeypatch):
    kept = record_deferred(monkeypatch)
    at = new_app(model="linear")
    want = {
        "shapes": "q, k, v, head_out in one",
        "mask": "state, normalizer, y in one",
        "block": "resid_pre,",
        "predict": "probs, logits in one",
        "positional": "pos_enc in one",
    }
    for view, npz in want.items():
        at.segmented_control(key="view").set_value(view).run()
        no_errors(at)
        html, file_name, _ = file_of(at, kept, HTML)
        assert file_name == f"attnviz_{view}_linear.html" and html.startswith(b"<!DOCTYPE html>")
        archive, manifest, _ = npz_of(at, kept, npz)
        assert manifest["model"] == "linear" and manifest["view"] == view
        for key, entry in manifest["arrays"].items():
            assert tuple(entry["shape"]) == archive[key].shape, (view, key)
    np.testing.assert_array_equal(archive["pos_enc"], loaders.get_pos_enc("linear"))


def test_the_positional_charts_leave_as_svg_and_png(monkeypatch):
    kept = record_deferred(monkeypatch)
    at = new_app(model="softmax", view="positional")
    no_errors(at)
    labels = [label for label in buttons(at) if label.endswith((".svg", ".png"))]
    assert len(labels) == 2 * len(at.get("vega_lite_chart")) == 6
    svg, name, mime = file_of(at, kept, "Positional encoding as .svg")
    root = ET.fromstring(svg)
    assert root.tag == "{http://www.w3.org/2000/svg}svg" and mime == "image/svg+xml"
    assert name.endswith(".svg") and len(root.findall(".//{http://www.w3.org/2000/svg}path"))
    png = file_of(at, kept, "Positional encoding as .png")[0]
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    html = file_of(at, kept, HTML)[0].decode()
    assert "window.vegaEmbed" in html and '"datasets":{' in html  # Vega inlined, data as values


def test_the_lab_views_leave_their_results(monkeypatch):
    kept = record_deferred(monkeypatch)
    at = new_app(model="softmax", view="ablate", ablate="1.3,0.2")
    no_errors(at)
    archive, manifest, _ = npz_of(at, kept, "losses, top, top_prob, importance,")
    T = len(manifest["token_ids"])
    assert archive["losses"].shape == (2, T - 1) and archive["importance"].shape == (3, 4)
    assert manifest["ablated"] == [[1, 3], [0, 2]] and manifest["mode"] == "zero"
    shown = [m.value for m in at.metric]
    assert shown[1] == f"{archive['losses'][1].mean():.3f} nats"  # the numbers on the page
    at.segmented_control(key="view").set_value("patch").run()
    archive, manifest, _ = npz_of(at, kept, "heads, residual in one")
    assert archive["heads"].shape == (3, 4) and archive["residual"].shape[0] == 4
    assert manifest["direction"] == "denoise" and len(manifest["clean_ids"]) == len(
        manifest["corrupted_ids"]
    )
    at.segmented_control(key="view").set_value("lens").run()
    archive, manifest, _ = npz_of(at, kept, "lens_top,")
    assert archive["dla_heads"].shape == (3, 4, T) and manifest["depth"][0] == "embedding"
    assert HTML in " ".join(buttons(at))


def test_user_text_cannot_close_the_script_or_add_markup():
    spec = vspec.figure([{"type": "bar", "x": ["</script><b>x"], "y": [1]}], {}, "</script>")
    drawn = [Drawn("k", plotly=encode(vspec.wired(spec)))]
    text = view_html(drawn, "<i>title</i>", ["Sentence: <img src=x onerror=alert(1)>"]).decode()
    assert "<img" not in text and "<i>" not in text and "&lt;img src=x" in text
    scripts = text.split("const FIGURES = ")[1]
    assert "</script>" not in scripts.split("</script></body>")[0]  # the data's own escaped
    assert [t for t, _ in Tags(text).tags].count("script") == 2  # plotly.js and the figures
