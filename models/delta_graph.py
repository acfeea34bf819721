"""DeltaNet in plain tensor operations for the exported ONNX graphs: a scan over tokens.

ONNX (opset 18) has no triangular solve, and torch.export cannot keep the sequence axis
symbolic through the padding and reshaping of a chunked form, so the graphs scan over
tokens (``torch.ops.higher_order.scan``, exported as ONNX ``Scan``; the number of steps
is T), carrying the state: O(1) memory per step and no T x T tensor in the fast graph.

The inspect graph also gives the implied attention A = (Q K^T * M)(I + L)^-1 diag(beta),
L = tril(diag(beta) K K^T, -1), computed by forward substitution, one row of
X = (I + L)^-1 per token:

    X_t = e_t - beta_t k_t^T G_{t-1},   G_t = G_{t-1} + k_t X_t   (G: d_head x T)
    A_t = (q_t^T G_{t-1} + (q_t . k_t) X_t) diag(beta)

G_{t-1} = sum_{j<t} k_j X_j holds every earlier token's key as the state has since
transformed it. Substitution is exact and stable for any keys; the Neumann series
(I + L)^-1 = sum_n (-L)^n is not (its terms grow like binomial coefficients when keys
align: issue #22 measured an error of 7e6 at T = 64).

Eagerly (tests, evaluation) the scan is a Python loop over the same step function.
"""

from __future__ import annotations

import torch
from torch._higher_order_ops.scan import scan as higher_order_scan

from models.delta import delta_step


def scan(body, init, xs: tuple[torch.Tensor, ...]):
    """``(final carry, stacked outputs)`` of ``body(carry, x) -> (carry, y)`` over axis 0 of
    every tensor in ``xs``: torch's scan operator when exporting (an ONNX ``Scan`` with a
    symbolic number of steps), a Python loop otherwise (no compilation per T)."""
    if torch.compiler.is_compiling() or torch.compiler.is_exporting():
        return higher_order_scan(body, init, xs)
    ys = []
    for i in range(xs[0].shape[0]):
        init, y = body(init, tuple(x[i] for x in xs))
        ys.append(y)
    if isinstance(ys[0], tuple):
        return init, tuple(torch.stack(parts) for parts in zip(*ys, strict=True))
    return init, torch.stack(ys)


def _time_first(*xs: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """(B, H, T, ...) tensors -> (T, B, H, ...), the scan axis first."""
    return tuple(x.movedim(2, 0) for x in xs)


def scan_delta(q, k, v, beta) -> torch.Tensor:
    """q, k, v (B, H, T, d_head), beta (B, H, T) -> y (B, H, T, d_head) (the fast graph)."""
    B, H, T, D = q.shape

    def body(S, x):
        y, S = delta_step(*x, S)  # (B, H, d_head), (B, H, d_head, d_head)
        return S, y

    _, ys = scan(body, q.new_zeros(B, H, D, D), _time_first(q, k, v, beta))  # (T, B, H, D)
    return ys.movedim(0, 2)  # (B, H, T, d_head)


def inspect_delta(q, k, v, beta, width: int | None = None):
    """q, k, v (B, H, T, d_head), beta (B, H, T) -> ``(y, states, attn)``: y (B, H, T,
    d_head); the state S_t after each token (B, H, T, d_head, d_head); the implied
    attention A (B, H, T, T), causal, with ``A @ v == y`` (rows need not sum to 1 and
    entries may be negative).

    ``width``: a fixed number of key columns >= T for the carry G (the exported inspect
    graph uses the context length: torch's ONNX exporter fails on a scan whose carry has
    the symbolic T in its shape); None: T.
    """
    B, H, T, D = q.shape
    width = T if width is None else width
    rows = torch.eye(T, width, dtype=q.dtype, device=q.device)  # (T, width): e_t

    def body(carry, x):
        S, G = carry  # (B, H, d_head, d_head), (B, H, d_head, width)
        qt, kt, vt, bt, et = x  # (B, H, d_head) x 3, (B, H), (width,)
        y, S = delta_step(qt, kt, vt, bt, S)  # (B, H, d_head), (B, H, d_head, d_head)
        read = (kt.unsqueeze(-2) @ G).squeeze(-2)  # (B, H, width): k_t^T G_{t-1}
        X = et - bt.unsqueeze(-1) * read  # (B, H, width): row t of (I + L)^-1
        qg = (qt.unsqueeze(-2) @ G).squeeze(-2)  # (B, H, width)
        attn = qg + (qt * kt).sum(-1, keepdim=True) * X  # (B, H, width)
        G = G + kt.unsqueeze(-1) * X.unsqueeze(-2)  # (B, H, d_head, width)
        return (S, G), (y, S.clone(), attn)

    init = (q.new_zeros(B, H, D, D), q.new_zeros(B, H, D, width))
    _, (ys, states, attn) = scan(body, init, (*_time_first(q, k, v, beta), rows))
    attn = attn.movedim(0, 2)[..., :T] * beta.unsqueeze(-2)  # (B, H, T, T): columns x beta_j
    return ys.movedim(0, 2), states.movedim(0, 2), attn
