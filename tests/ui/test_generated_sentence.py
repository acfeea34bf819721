"""A generated continuation inspected as generated (#48 item 5, #44 item 21): after
"Use as the sentence", every view analyses the ids the model made, not its text
tokenized again, which a byte-level BPE model spells otherwise."""

from __future__ import annotations

import numpy as np
import pytest

from models.tokenizer import encode
from tests.helpers.charts import plotly_charts
from tests.helpers.gpt2_tokenizer import gpt2_style_tokenizer
from tests.helpers.nanogpt_layout import ARGS, ckpt_bytes, nanogpt_state
from tests.ui.test_app import decode
from tests.ui.test_upload import upload
from ui import sentence_ids
from ui.loaders import UPLOAD_KEY
from ui.visualizer import VIEWS


@pytest.mark.slow
def test_a_bpe_model_s_continuation_keeps_its_ids_in_every_view():
    args = dict(ARGS, vocab_size=300, block_size=32)
    # seed 5, weights of std 1: greedy decoding makes lone UTF-8 continuation bytes
    ckpt = ckpt_bytes(nanogpt_state(args, seed=5, std=1.0), args, optimizer=False)
    at = upload([("ckpt.pt", ckpt), ("tokenizer.json", gpt2_style_tokenizer(300).encode())])
    assert not at.exception and not at.error, [e.value for e in at.error]
    at.text_area(key="text").set_value("the cat").run()
    at.segmented_control(key="view").set_value("predict").run()
    at.button(key="generate").click().run()
    text, ids = at.session_state["generated"][1], at.session_state["generated"][6]
    model = at.session_state[UPLOAD_KEY]
    again = encode(model.tokenizer, text).ids
    assert again != ids and len(again) > len(ids)  # the text reads back as other tokens
    assert "\ufffd" in text  # bytes that are no character decode to U+FFFD

    at.button(key="use_gen").click().run()
    assert not at.exception and not at.error
    assert at.session_state[sentence_ids.KEY] == ("upload", text, ids)
    at.segmented_control(key="view").set_value("attention").run()
    labels = plotly_charts(at)[0].spec["data"][0]["x"]
    assert len(labels) == len(ids) and not any("\ufffd" in t for t in labels), labels
    z = decode(plotly_charts(at)[0].spec["data"][0]["z"])
    np.testing.assert_allclose(z, model.inspect(ids)["attn"][0, 0], atol=1e-6)  # these ids
    notice = [i.value for i in at.info if "as generated" in i.value]
    assert notice and f"{len(again)} tokens" in notice[0], [i.value for i in at.info]
    for view in VIEWS:
        if view == "patch":
            continue  # its own two sentences (tests/ui/test_lab_views.py)
        at.segmented_control(key="view").set_value(view).run()
        assert not at.exception and not at.error, (view, [e.value for e in at.exception])
    at.segmented_control(key="view").set_value("predict").run()
    table = at.dataframe[0].value  # position, token, #1 next, ...: one row per token
    assert len(table) == len(ids)
