"""The multi-head attention reshape pipeline, with real numbers.

``reshape_stages`` lists every tensor shape from the input (B, T, C) to the output
projection; ``viz.shape_flow.shape_flow_figure`` draws the list.
"""

from __future__ import annotations

# Axis names of each shape, by its layout; C is d_model and D is d_head.
_DIMS = {
    "BTC": ("B", "T", "d_model"),
    "BTHD": ("B", "T", "H", "d_head"),
    "BHTD": ("B", "H", "T", "d_head"),
    "BHTT": ("B", "H", "T", "T"),
    "BHDD": ("B", "H", "d_head", "d_head"),
    "BHD": ("B", "H", "d_head"),
    "BHT": ("B", "H", "T"),
    "BTK": ("B", "T", "H_kv·d_head"),
    "BTKD": ("B", "T", "H_kv", "d_head"),
    "BKTD": ("B", "H_kv", "T", "d_head"),
}


def _stage(step: str, op: str, shape: tuple[int, ...], note: str, dims: str) -> dict:
    return {
        "step": step,
        "op": op,
        "shape": tuple(int(s) for s in shape),
        "dims": _DIMS[dims],
        "note": note,
    }


def _softmax_stages(B: int, T: int, H: int, D: int, eps: float) -> tuple[list[dict], str]:
    """Softmax attention's mixing stages and its ``mix values`` formula."""
    stages = [
        _stage(
            "scores",
            "Q Kᵀ / √d_head",
            (B, H, T, T),
            f"one score per (query, key) pair: {T} × {T}",
            "BHTT",
        ),
        _stage(
            "weights",
            "mask + softmax(-1)",
            (B, H, T, T),
            "future keys → −∞; rows sum to 1",
            "BHTT",
        ),
    ]
    return stages, "weights · V"


def _linear_stages(B: int, T: int, H: int, D: int, eps: float) -> tuple[list[dict], str]:
    """Linear attention's mixing stages (Katharopoulos et al. 2020) and its formula, with
    the normalizer's epsilon ``eps`` written out."""
    stages = [
        _stage(
            "feature map",
            "φ(Q), φ(K), φ(x) = elu(x) + 1",
            (B, H, T, D),
            "positive features",
            "BHTD",
        ),
        _stage(
            "state",
            "S_i = sum over j ≤ i of φ(k_j) v_jᵀ",
            (B, H, D, D),
            f"running {D} × {D} summary per head, no {T} × {T} matrix",
            "BHDD",
        ),
        _stage(
            "normalizer",
            "z_i = sum over j ≤ i of φ(k_j)",
            (B, H, D),
            f"output divided by φ(q_i)ᵀ z_i + ε, ε = {eps:g}",
            "BHD",
        ),
    ]
    return stages, f"φ(q_i)ᵀ S_i / (φ(q_i)ᵀ z_i + ε), ε = {eps:g}"


def _delta_stages(B: int, T: int, H: int, D: int, eps: float) -> tuple[list[dict], str]:
    """DeltaNet's mixing stages (Yang et al. 2024; ``models/delta.py``): the convolved,
    SiLU'd, L2-normalised q and k, the write strength beta and the delta-rule state."""
    stages = [
        _stage(
            "conv + norm",
            "q, k = L2(SiLU(conv₄(·))), v = conv₄(·)",
            (B, H, T, D),
            "width-4 causal convolution; unit-length q, k",
            "BHTD",
        ),
        _stage("beta", "β_t = sigmoid(W_β x_t)", (B, H, T), "write strength per head", "BHT"),
        _stage(
            "state",
            "S_t = S_(t−1) + β_t k_t (v_t − S_(t−1)ᵀ k_t)ᵀ",
            (B, H, D, D),
            f"erase, then write: a {D} × {D} state per head",
            "BHDD",
        ),
    ]
    return stages, "S_tᵀ q_t"


# Attention kind -> the stages between "heads first" and "mix values", and the mix formula.
_MIXING_STAGES = {"softmax": _softmax_stages, "linear": _linear_stages, "delta": _delta_stages}


def reshape_stages(
    B: int,
    T: int,
    C: int,
    H: int,
    D: int | None = None,
    attention: str = "softmax",
    eps: float = 1e-6,
    layer: int | None = None,
    kv_heads: int | None = None,
    rotary: bool = False,
    norm: str = "LayerNorm",
) -> list[dict]:
    """Shapes through one multi-head attention layer.

    Args:
        B: batch size, T: tokens, C: d_model, H: heads, D: d_head (default C // H).
        attention: ``"softmax"`` (T x T score matrix) or ``"linear"`` (feature map
            phi(x) = elu(x) + 1 and a (D, D) state per head instead of T x T).
        eps: linear attention's normalizer epsilon (the model's ``cfg.attn_eps``), shown in
            its formulas.
        layer: the layer shown, named in the input stage (its input x is the
            LayerNorm'd residual stream entering that layer; only layer 0's residual
            stream is the token + position embedding).
        kv_heads: grouped-query attention's H_kv < H key/value heads (Ainslie et al.
            2023): K and V are projected to H_kv heads, then each is repeated for the
            H / H_kv query heads that share it.
        rotary: RoPE turns each head's q and k by its position after the split.
        norm: the norm x comes out of ("LayerNorm", "RMSNorm"); other than LayerNorm,
            kept as the input stage's ``norm`` (``viz.shape_flow`` names it).

    Returns:
        Ordered list of dicts ``{"step", "op", "shape", "dims", "note"}``; ``shape`` is a
        tuple of ints, e.g. ``(B, H, T, D)`` with real numbers substituted, and ``dims``
        names its axes (``("B", "H", "T", "d_head")``).

    Raises:
        ValueError: for a non-positive size, ``H * D != C`` or an unknown attention kind.
    """
    if D is None:
        D = C // H if H > 0 else 0
    for name, val in (("B", B), ("T", T), ("C", C), ("H", H), ("D", D)):
        if int(val) < 1:
            raise ValueError(f"{name} must be >= 1, got {val}")
    if H * D != C:
        raise ValueError(f"H * D must equal C, got {H} * {D} != {C}")
    if attention not in _MIXING_STAGES:
        raise ValueError(f"unknown attention kind {attention!r}")

    where = "this layer" if layer is None else f"layer {layer}"
    if kv_heads and kv_heads < H:
        stages = _grouped(B, T, C, H, D, kv_heads, rotary, where, attention, eps)
        return _named_norm(stages, norm)
    stages = [
        _stage(
            "input",
            f"x = LayerNorm(residual stream entering {where})",
            (B, T, C),
            "B sentences, T tokens, d_model numbers each; layer 0's residual stream is "
            "the token + position embedding",
            "BTC",
        ),
        _stage(
            "project",
            "Q, K, V = x W_Q, x W_K, x W_V",
            (B, T, C),
            "three Linear(d_model, d_model) layers",
            "BTC",
        ),
        _stage(
            "split heads",
            "view(B, T, H, d_head)",
            (B, T, H, D),
            f"d_model = H × d_head = {H} × {D}",
            "BTHD",
        ),
        _stage(
            "heads first", "transpose(1, 2)", (B, H, T, D), "each head sees all T tokens", "BHTD"
        ),
    ]
    if rotary:
        stages.append(_rope_stage(B, H, T, D))
    return _finish(_named_norm(stages, norm), B, T, C, H, D, attention, eps)


def _named_norm(stages: list[dict], norm: str) -> list[dict]:
    """``stages`` with the input stage's ``norm`` set when it is not LayerNorm."""
    if norm != "LayerNorm":
        stages[0]["norm"] = norm
    return stages


def _rope_stage(B: int, H: int, T: int, D: int) -> dict:
    return _stage("rotate q, k", "RoPE: turn by position", (B, H, T, D),
                  "q and k only; v is not turned", "BHTD")  # fmt: skip


def _grouped(B, T, C, H, D, kv, rotary, where, attention, eps) -> list[dict]:
    """The stages of grouped-query attention: K and V on H_kv heads, repeated to H."""
    stages = [
        _stage(
            "input",
            f"x = norm(residual stream entering {where})",
            (B, T, C),
            "B sentences, T tokens, d_model numbers each",
            "BTC",
        ),
        _stage("project Q", "Q = x W_Q", (B, T, C), "Linear(d_model, d_model)", "BTC"),
        _stage(
            "project K, V",
            "K, V = x W_K, x W_V",
            (B, T, kv * D),
            f"Linear(d_model, H_kv·d_head = {kv}·{D}): {H // kv}× smaller",
            "BTK",
        ),
        _stage(
            "split K, V", "view(B, T, H_kv, d_head)", (B, T, kv, D), f"{kv} key/value heads", "BTKD"
        ),
        _stage(
            "heads first", "transpose(1, 2)", (B, kv, T, D), "Q is split to H heads alike", "BKTD"
        ),
    ]
    if rotary:
        stages.append(_stage("rotate k (and q)", "RoPE: turn by position", (B, kv, T, D),
                             f"k shown; q turns alike at (B, H, T, d_head), H = {H}; v is not turned",
                             "BKTD"))  # fmt: skip
    stages.append(
        _stage(
            "repeat K, V",
            f"repeat_interleave({H // kv}, dim=1)",
            (B, H, T, D),
            f"query heads h read key/value head h // {H // kv}",
            "BHTD",
        )
    )
    return _finish(stages, B, T, C, H, D, attention, eps)


def _finish(stages, B, T, C, H, D, attention, eps) -> list[dict]:
    """``stages`` then the mixing rule's, the value mix, the merge and W_O."""
    mixing, mix = _MIXING_STAGES[attention](B, T, H, D, eps)
    stages += mixing
    stages += [
        _stage("mix values", mix, (B, H, T, D), "per-head output (head_out)", "BHTD"),
        _stage(
            "merge heads",
            "transpose(1, 2).reshape(B, T, d_model)",
            (B, T, C),
            # short: a longer note ran past the figure's edge at 1280 px
            "concatenate heads (not contiguous: .view fails)",
            "BTC",
        ),
        _stage("output", "· W_O", (B, T, C), "Linear(d_model, d_model) mixes the heads", "BTC"),
    ]
    return stages
