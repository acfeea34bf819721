"""Every figure builder that puts tokens into tick labels or hover text escapes them.

Plotly renders tick labels, hover text and titles as pseudo-HTML: a token
``<b>x</b>`` must show as those characters, not as bold text (nor a link).
"""

from __future__ import annotations

import numpy as np
import pytest

from viz import attention, grid, lessons, mask, style, tensors

TOKEN = "<b>x</b>"
ESCAPED = "&lt;b&gt;x&lt;/b&gt;"
TOKENS = ["the", TOKEN, "a&b", "the"]
T = len(TOKENS)
W = np.tril(np.full((T, T), 0.25))

BUILDERS = {
    "attention_heatmap": lambda: attention.attention_heatmap(W, TOKENS),
    "head_grid": lambda: grid.head_grid(np.stack([np.stack([W, W])] * 2), TOKENS),
    "attention_with_row": lambda: attention.attention_with_row(W, TOKENS, 1),
    "causal_mask_softmax": lambda: mask.causal_mask_panels(W, W, TOKENS),
    "causal_mask_linear": lambda: mask.causal_mask_panels(W, W, TOKENS, "linear"),
    "matrix_heatmap": lambda: tensors.matrix_heatmap(W[:, :2], TOKENS, None, "q", "d", "token"),
    "vector_bar": lambda: tensors.vector_bar(np.ones(T), TOKENS),
    "topk_bars": lambda: tensors.topk_bars(np.full(T, 0.25), TOKENS, k=T),
    "beta_attention": lambda: lessons.beta_attention(W, TOKENS, 2.0),
    "entropy_bars": lambda: lessons.entropy_bars(np.ones(T), TOKENS, 2.0),
    "side_by_side": lambda: lessons.side_by_side([W, W], ["a", "b"], TOKENS),
}


def strings(value) -> list[str]:
    """Every string anywhere in a plotly figure dict (labels, categories, hover, titles)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list | tuple | np.ndarray):
        return [s for v in value for s in strings(v)]
    return []


def as_dict(fig) -> dict:
    """A plain spec as it is, a ``go.Figure`` as its dict."""
    return fig if isinstance(fig, dict) else fig.to_dict()


def category_labels(fig) -> list[str]:
    """The x/y values of every trace: the tick text of categorical axes and what %{x} /
    %{y} put into the hover."""
    out = []
    for trace in as_dict(fig)["data"]:
        for axis in ("x", "y"):
            out += list(np.asarray(trace.get(axis, []), dtype=object).ravel())
    return [v for v in out if isinstance(v, str)]


@pytest.mark.parametrize("name", list(BUILDERS))
def test_tokens_are_escaped_in_labels_and_hover(name):
    fig = BUILDERS[name]()
    labels = category_labels(fig)
    assert any(ESCAPED in label for label in labels), labels  # the token is shown...
    assert any("a&amp;b" in label for label in labels), labels
    everything = strings(as_dict(fig))
    assert not [s for s in everything if TOKEN in s or "a&b" in s]  # ...never as markup
    for trace in as_dict(fig)["data"]:  # hover reads the escaped labels, not raw tokens
        assert TOKEN not in str(trace.get("hovertemplate", "")) + str(trace.get("text", ""))


def test_escape_is_the_one_helper():
    assert style.escape(TOKEN) == ESCAPED
    assert style.escape("a & <i>") == "a &amp; &lt;i&gt;"
    assert style.token_labels([TOKEN]) == [f"0·{ESCAPED}"]
