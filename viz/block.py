"""The transformer block (pre-LN, GPT-2 layout) as a flow of tensors with real shapes.

``block_stages`` lists each tensor of one block, from the residual stream in to the
residual stream out; ``viz.shapes.shape_flow_figure`` draws the list as boxes and arrows.
"""

from __future__ import annotations

BTC = ("B", "T", "d_model")
BTM = ("B", "T", "d_mlp")


def _stage(step: str, op: str, shape: tuple[int, ...], note: str, dims: tuple) -> dict:
    return {"step": step, "op": op, "shape": tuple(int(s) for s in shape), "dims": dims,
            "note": note}  # fmt: skip


def block_stages(
    B: int, T: int, C: int, d_mlp: int, H: int, attention: str = "softmax"
) -> list[dict]:
    """Shapes through one pre-LN block: x + attn(ln_1(x)), then x + mlp(ln_2(x)).

    Args:
        B: batch, T: tokens, C: d_model, d_mlp: the MLP's hidden width, H: heads.
        attention: ``"softmax"`` or ``"linear"`` (named in the attention arrow).

    Returns:
        The stages of ``viz.shapes.reshape_stages``' form: ``{"step", "op", "shape",
        "dims", "note"}``.

    Raises:
        ValueError: for a size below 1 or C not divisible by H.
    """
    for name, val in (("B", B), ("T", T), ("C", C), ("d_mlp", d_mlp), ("H", H)):
        if int(val) < 1:
            raise ValueError(f"{name} must be >= 1, got {val}")
    if C % H:
        raise ValueError(f"d_model {C} is not divisible by {H} heads")
    D = C // H
    return [
        _stage("residual stream in", "", (B, T, C), "", BTC),
        _stage(
            "ln_1(x)", "LayerNorm", (B, T, C), "each token: mean 0, variance 1, then γ, β", BTC
        ),  # fmt: skip
        _stage(
            "attention output",
            f"{attention} attention, {H} heads × d_head {D}, then W_O",
            (B, T, C),
            "mixes information between tokens",
            BTC,
        ),  # fmt: skip
        _stage(
            "x + attention", "add (residual)", (B, T, C), "the block adds, never replaces", BTC
        ),  # fmt: skip
        _stage("ln_2(x)", "LayerNorm", (B, T, C), "normalize again", BTC),
        _stage(
            "MLP hidden",
            f"Linear({C}, {d_mlp}) + GELU",
            (B, T, d_mlp),
            "each token on its own",
            BTM,
        ),  # fmt: skip
        _stage("MLP output", f"Linear({d_mlp}, {C})", (B, T, C), "back to d_model", BTC),
        _stage(
            "residual stream out",
            "add (residual)",
            (B, T, C),
            "x + MLP: the next block's input",
            BTC,
        ),  # fmt: skip
    ]
