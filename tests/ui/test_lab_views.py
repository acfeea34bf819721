"""The lab views under AppTest on the shipped models: a link's heads and mode, its refused
parts in one line; the ablation's numbers are the lab's; every lab view on every model."""

from __future__ import annotations

import pytest

from corpus.heldout import validation_lines
from inference import lab
from models.config import SHIPPED_KINDS
from tests.helpers.charts import plotly_charts
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
