"""Views on uploaded models far from the shipped sizes (AppTest through the real uploader)."""

from __future__ import annotations

import pytest

from tests.helpers.checkpoints import tiny_checkpoint
from tests.ui.test_upload import upload


@pytest.mark.slow
@pytest.mark.parametrize("position_scheme", ["sinusoidal", "learned"])
def test_narrow_model_renders_every_view(tmp_path, position_scheme):
    """d_model = 8 is below the positional view's default dimensions (0-3, 8, 9)."""
    path = tiny_checkpoint(
        tmp_path / "narrow.safetensors",
        n_layer=1,
        n_head=2,
        d_model=8,
        d_mlp=16,
        context_length=24,
        attention="linear",
        position_scheme=position_scheme,
    )
    at = upload([(path.name, path.read_bytes())])
    assert not at.exception and not at.error, [e.value for e in at.error]
    at.text_area(key="text").set_value("the cat sat on the mat").run()
    for view in ("positional", "attention", "mask", "shapes", "predict", "stats", "compare"):
        at.segmented_control(key="view").set_value(view).run()
        assert not at.exception, (view, [e.value for e in at.exception])
        assert not at.error, (view, [e.value for e in at.error])
        if view == "positional":
            captions = " ".join(c.value for c in at.caption)
            assert "positions 0–23" in captions  # the whole context, not only the sentence
            assert at.multiselect(key="pe_dims").value == [0, 1, 2, 4]  # 0, 1, C/8, C/4, C/2
