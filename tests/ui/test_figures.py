"""ui.figures: an encoded figure is byte for byte what plotly.io writes for its spec,
with its height, however large it is."""

from __future__ import annotations

import plotly.io
import pytest

from ui import figures
from ui.figures import Encoded, encode


def sent(fig) -> str:
    """The figure's JSON: ours for an encoded figure, plotly.io's for a spec."""
    if isinstance(fig, Encoded):
        return fig.json.decode()
    return plotly.io.to_json(fig, validate=False)


def spec_with(text: str) -> dict:
    return {
        "data": [{"type": "bar", "x": ["a/b", "<c>"], "y": [1, 2.5], "hovertext": text}],
        "layout": {"height": 321, "title": {"text": "q·k / √d <b>x</b>"}},
    }


@pytest.mark.parametrize("size", [10, 3 * figures.PIECE_BYTES])
def test_an_encoded_figure_is_what_plotly_io_writes_for_its_spec(size):
    # every character plotly.io escapes, and the two line separators placed where a
    # piece may end: a split UTF-8 character would escape the replacement
    unit = "x/<>\u2028é\u2029"
    spec = spec_with((unit * (size // len(unit) + 1))[:size])
    encoded = encode(spec)
    assert len(encoded.json) > size  # escaped
    assert sent(encoded) == sent(spec)
    assert "\u2028" not in sent(encoded) and "/" not in sent(encoded)


def test_the_height_is_the_specs():
    assert encode(spec_with("")).height == 321
    assert encode({"data": [], "layout": {}}).height is None  # ui/chart.js: 450 px


def test_an_encoded_figure_decodes_to_its_spec():
    spec = spec_with("a/b\u2028")
    assert encode(spec).spec() == spec
    assert encode(spec).spec() is not encode(spec).spec()


def test_a_spec_that_is_not_json_is_refused():
    with pytest.raises(TypeError):
        encode({"data": [], "datasets": {"t": object()}})


@pytest.mark.parametrize("frames", [False, True])
def test_a_new_layout_changes_only_the_layout(frames):
    """``Encoded.with_layout``: the same bytes as encoding the changed spec, the traces
    copied; the changed figure can change again (its layout found anew)."""
    spec = spec_with("a/b<")
    if frames:
        spec["frames"] = [{"name": "0", "data": [{"y": [0, 1]}]}]
    outlined = encode(spec).with_layout(lambda layout: {**layout, "shapes": [{"x0": "</"}]})
    changed = {**spec, "layout": {**spec["layout"], "shapes": [{"x0": "</"}]}}
    assert outlined.json == encode(changed).json and sent(outlined) == sent(changed)
    again = outlined.with_layout(lambda layout: {**layout, "height": 99})
    assert again.spec()["layout"] == {**changed["layout"], "height": 99} and again.height == 99
    assert encode(spec).spec() == spec  # the kept figure is unchanged
