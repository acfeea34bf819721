"""CNN, RNN and self-attention compared as layers over a sequence (d2l.ai 11.6.2).

For a sequence of n tokens, d numbers each, and a convolution of kernel size k:

====================  ============  ===================  ====================
layer                 computation   sequential ops       maximum path length
====================  ============  ===================  ====================
CNN (kernel k)        O(k n d²)     O(1)                 O(n / k)
RNN                   O(n d²)       O(n)                 O(n)
self-attention        O(n² d)       O(1)                 O(1)
====================  ============  ===================  ====================

:func:`layer_costs` evaluates each column at given n, d, k (leading constants 1), so a
lecture can put this sentence's numbers beside the big-O. Sources: Vaswani et al. 2017,
table 1; Zhang et al., *Dive into Deep Learning*, section 11.6.2.
"""

from __future__ import annotations

import math


def path_length_cnn(n: int, k: int) -> int:
    """Layers of kernel size ``k`` (stride 1, no dilation) a signal needs to travel from
    the first to the last of ``n`` tokens: each layer widens the view by k − 1.

    Raises:
        ValueError: for n < 1 or k < 2.
    """
    if n < 1 or k < 2:
        raise ValueError(f"need n >= 1 and k >= 2, got n={n}, k={k}")
    return math.ceil((n - 1) / (k - 1))


def layer_costs(n: int, d: int, k: int = 3) -> list[dict]:
    """One row per layer kind at n tokens of width d (kernel size k for the CNN).

    Returns:
        ``[{"layer", "computation", "operations", "sequential", "sequential operations",
        "max path", "maximum path length"}]``: the big-O, then its value at these sizes
        (multiply-adds with constant 1; sequential steps; layers or steps between the
        first and the last token).

    Raises:
        ValueError: for n < 1, d < 1 or k < 2.
    """
    if d < 1:
        raise ValueError(f"d must be >= 1, got {d}")
    cnn_path = path_length_cnn(n, k)
    return [
        _row(f"CNN (kernel k = {k})", "O(k·n·d²)", k * n * d * d, "O(1)", 1, "O(n/k)", cnn_path),
        _row("RNN", "O(n·d²)", n * d * d, "O(n)", n, "O(n)", max(n - 1, 0)),
        _row("self-attention", "O(n²·d)", n * n * d, "O(1)", 1, "O(1)", 1 if n > 1 else 0),
    ]


def _row(layer, comp, ops, seq, n_seq, path, n_path) -> dict:
    return {
        "layer": layer,
        "computation": comp,
        "operations": ops,
        "sequential": seq,
        "sequential operations": n_seq,
        "max path": path,
        "maximum path length": n_path,
    }


def attention_costs(n: str = "T") -> dict[str, str]:
    """The big-O of one softmax and one linear attention layer over ``n`` tokens of width
    d, worded once for every page that states them (the lecture's step 12, the
    Complexity page).

    Softmax builds the n × n weights: n²·d multiply-adds for QKᵀ and again for the
    weights times V, and the n² weights held beside the n·d queries, keys and values.
    Linear attention reorders φ(Q)(φ(K)ᵀV): n·d² multiply-adds and a d × d state.

    Returns:
        ``{"softmax_time", "softmax_memory", "linear_time", "linear_memory"}``.
    """
    return {
        "softmax_time": f"O({n}²·d)",
        "softmax_memory": f"O({n}²) for the weights plus O({n}·d)",
        "linear_time": f"O({n}·d²)",
        "linear_memory": f"O(d²) for the state plus O({n}·d)",
    }
