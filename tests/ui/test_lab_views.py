"""The lab views under AppTest on the shipped models: a link's heads and mode, its refused
parts in one line; the ablation's numbers are the lab's; every lab view on every model."""

from __future__ import annotations

import numpy as np
import pytest

from corpus.heldout import validation_lines
from inference import lab
from models.config import SHIPPED_KINDS
from tests.helpers.charts import plotly_charts
from tests.helpers.pages import short_patching_pair
from tests.ui.test_app import new_app, no_errors
from ui import loaders
from ui.lab_view import parse_heads


def test_parse_heads_keeps_only_heads_of_the_model():
    kept, refused = parse_heads("1.3, 0.2,1.3,9.9,²,1.,a.b,0.0.0,-1.2", 3, 4)
    assert kept == ["1.3", "0.2"]
    assert refused == ["9.9", "²", "1.", "a.b", "0.0.0", "-1.2"]


def test_a_link_opens_the_ablation_it_names():
    at = new_app(view="ablate", ablate="1.3,0.2,9.9", mode="mean", model="softmax")
    no_errors(at)
    assert at.multiselect(key="ablate_heads").value == ["1.3", "0.2"]
    assert at.segmented_control(key="mode").value == "mean"
    refused = [w.value for w in at.warning if "ablate=" in w.value]
    assert len(refused) == 1 and "9.9" in refused[0] and "\n" not in refused[0]
    assert at.query_params["ablate"] in ("1.3,0.2", ["1.3,0.2"])  # the URL says what is on screen
    model = loaders.get_model("softmax")
    text = at.text_area(key="text").value
    ids = model.tokenizer.encode(text, add_special_tokens=False).ids
    rows = lab.validation_chunks(model.tokenizer, validation_lines(), 64)
    means = lab.mean_head_outputs(model, rows)
    want = lab.ablate(model, ids, [(1, 3), (0, 2)], "mean", means)
    before, after = want.mean_losses
    shown = [m.value for m in at.metric]
    assert shown[0] == f"{before:.3f} nats" and shown[1] == f"{after:.3f} nats", shown
    at.multiselect(key="ablate_heads").set_value([]).run()
    assert "ablate" not in at.query_params


@pytest.mark.parametrize("kind", SHIPPED_KINDS)
def test_every_lab_view_draws_on_every_shipped_model(kind):
    at = new_app(model=kind, view="ablate", ablate="1.1")
    for view, keys in (("ablate", {"ablate_loss", "ablate_grid", "ablate_probe"}),
                       ("patch", {"patch_heads", "patch_resid"}),
                       ("lens", {"lens_grid", "lens_dla"})):  # fmt: skip
        at.segmented_control(key="view").set_value(view).run()
        no_errors(at)
        assert keys <= {c.key for c in plotly_charts(at)}, (kind, view)


@pytest.mark.slow
def test_an_uploaded_nanogpt_checkpoint_gets_the_lab_views():
    """A nanoGPT ckpt.pt (char meta.pkl) through the uploader: its export has a lab graph,
    and the three lab views draw from it (the graph's numbers are tested on the shipped
    models, whose lab graphs come from the same exporter)."""
    from tests.helpers.nanogpt_layout import ARGS, ckpt_bytes, meta_bytes, nanogpt_state
    from tests.ui.test_upload import upload

    ckpt = ckpt_bytes(nanogpt_state(ARGS), ARGS, prefix="_orig_mod.")
    at = upload([("ckpt.pt", ckpt), ("meta.pkl", meta_bytes())])
    no_errors(at)
    at.text_area(key="text").set_value("hello there").run()
    at.segmented_control(key="view").set_value("ablate").run()
    at.multiselect(key="ablate_heads").set_value(["0.1"]).run()
    no_errors(at)
    assert {"ablate_loss", "ablate_grid", "ablate_probe"} <= {c.key for c in plotly_charts(at)}
    before, after = (float(m.value.split()[0]) for m in at.metric[:2])
    assert before > 0 and after > 0 and before != after
    for view, key in (("patch", "patch_heads"), ("lens", "lens_grid")):
        at.segmented_control(key="view").set_value(view).run()
        if view == "patch":  # its context of 16 tokens: the user types a shorter pair
            short_patching_pair(at)
        no_errors(at)
        assert key in {c.key for c in plotly_charts(at)}, view


def test_the_readme_states_the_lecture_steps_numbers():
    """README "The lab": the loss on the probe's second copy and the three heads that raise
    it most, as the lecture step computes them (``ui.lecture.lab_steps``)."""
    import numpy as np

    from tests.helpers import ROOT
    from ui import lab_loaders

    model = loaders.get_model("softmax")
    probe = lab_loaders.probe_ids(model)
    copy = lab_loaders.second_copy(len(probe) // 2)
    means = lab_loaders.mean_outputs(model)
    grid = lab.importance_grid(model, probe, "mean", means, copy)
    base = lab.next_token_losses(lab.lab(model, probe)["logits"], probe)[0][list(copy)].mean()
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert f"second copy is {base:.2f} nats" in readme
    top = np.argsort(grid, axis=None)[::-1][:3]
    (a, b, c) = (divmod(int(i), 4) for i in top)
    assert (
        f"ablating **L{a[0]} H{a[1]}**" in readme and f"raises it by {grid[a]:.2f} nats" in readme
    )
    assert f"**L{b[0]} H{b[1]}** (+{grid[b]:.2f})" in readme
    assert f"**L{c[0]} H{c[1]}** (+{grid[c]:.2f})" in readme


@pytest.mark.parametrize("kind", SHIPPED_KINDS)
def test_the_not_explanation_lesson_shows_the_measured_heads(kind):
    from tests.helpers.pages import open_page
    from ui.lessons.not_explanation import measure

    at = new_app(model=kind)
    open_page("not-explanation", at)
    no_errors(at)
    sharp, effect = measure(loaders.get_model(kind))
    quiet, plain = lab.looks_and_does(sharp, effect)
    heads = [m.value for m in at.markdown if m.value.startswith("**L")]
    assert heads == [f"**L{quiet[0]} H{quiet[1]}: looks striking, matters little**",
                     f"**L{plain[0]} H{plain[1]}: looks plain, matters most**"]  # fmt: skip
    assert sharp[quiet] >= np.median(sharp) > sharp[plain] and effect[plain] > abs(effect[quiet])
    captions = " ".join(c.value for c in at.caption)
    assert f"changes by {effect[plain]:+.3f} nats" in captions
    assert len(plotly_charts(at)) == 2


def test_an_onnx_upload_with_our_lab_graph_opens_and_says_it_set_it_aside(exported_dir):
    from tests.ui.test_upload import upload
    from ui.lab_view import NO_LAB

    files = [(f"softmax.{g}.onnx", (exported_dir / f"softmax.{g}.onnx").read_bytes())
             for g in ("inspect", "lab")]  # fmt: skip
    at = upload(files)
    no_errors(at)
    assert at.radio(key="model").value == "upload"
    card = " ".join(c.value for c in at.caption) + " ".join(m.value for m in at.markdown)
    assert "was set aside" in card, card
    at.segmented_control(key="view").set_value("ablate").run()
    no_errors(at)
    assert [i.value for i in at.info if "hand on its heads" in i.value] == [NO_LAB]
    only_lab = upload(files[1:])
    assert any("is a lab graph: upload its inspect graph too" in e.value for e in only_lab.error)
