"""DeltaNet (issue #22): its recurrent, chunked parallel and scanned (exported) forms
agree, and the implied attention is the recurrence's effective weights."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from models.config import ModelConfig
from models.delta import ShortConv, chunked_delta, l2_normalize, recurrent_delta
from models.delta_graph import inspect_delta, scan_delta
from models.transformer import Transformer


def inputs(B=2, H=3, T=50, D=8, seed=0):
    """Random q, k (SiLU + L2 norm, as the model makes them), v and beta in (0, 1)."""
    g = torch.Generator().manual_seed(seed)
    q, k = (l2_normalize(F.silu(torch.randn(B, H, T, D, generator=g))) for _ in range(2))
    v = torch.randn(B, H, T, D, generator=g)
    return q, k, v, torch.rand(B, H, T, generator=g)


def relative(a: torch.Tensor, b: torch.Tensor) -> float:
    return ((a - b).abs().max() / b.abs().max()).item()


def test_recurrent_equals_chunked_parallel_float32():
    """S_t = S_{t-1} + beta k (v - S^T k)^T token by token == the WY/UT chunked form, for
    chunks that divide T, do not, and hold all of it; <= 1e-4 relative in float32."""
    q, k, v, beta = inputs()
    y_rec, states = recurrent_delta(q, k, v, beta)
    for chunk in (64, 16, 7):
        y, S = chunked_delta(q, k, v, beta, chunk)
        assert relative(y, y_rec) <= 1e-4
        assert relative(S, states[:, :, -1]) <= 1e-4
    assert relative(scan_delta(q, k, v, beta), y_rec) <= 1e-4  # the fast graph's form


def effective_weights(q, k, beta) -> torch.Tensor:
    """A_tj = beta_j q_t^T P_tj k_j, P_tj = prod_{s=j+1..t} (I - beta_s k_s k_s^T), from the
    recurrence's own algebra, in float64: (B, H, T, T)."""
    q, k, beta = q.double(), k.double(), beta.double()
    B, H, T, D = q.shape
    A = torch.zeros(B, H, T, T, dtype=torch.float64)
    eye = torch.eye(D, dtype=torch.float64)
    for j in range(T):
        key = beta[:, :, j, None] * k[:, :, j]  # (B, H, D): what token j wrote, as a key
        for t in range(j, T):
            if t > j:  # later tokens erase along their keys
                kt = k[:, :, t]
                proj = eye - beta[:, :, t, None, None] * kt.unsqueeze(-1) * kt.unsqueeze(-2)
                key = (proj @ key.unsqueeze(-1)).squeeze(-1)
            A[:, :, t, j] = (q[:, :, t] * key).sum(-1)
    return A


def test_implied_attention_is_the_recurrences_effective_weights():
    """The inspect form's A (forward substitution) == the product of the erase steps, and
    A @ v == y; rows are causal and, unlike softmax, need not sum to 1."""
    q, k, v, beta = inputs(B=1, H=2, T=20)
    y, states, attn = inspect_delta(q, k, v, beta)
    want = effective_weights(q, k, beta)
    assert relative(attn.double(), want) <= 1e-4
    assert relative(attn @ v, recurrent_delta(q, k, v, beta)[0]) <= 1e-4
    assert relative(states, recurrent_delta(q, k, v, beta)[1]) <= 1e-4
    assert attn.triu(1).abs().max() == 0
    assert (attn.sum(-1) - 1).abs().max() > 1e-2


def test_aligned_keys_stay_stable():
    """64 identical keys with beta = 0.9 (the case where issue #22 saw a Neumann series for
    (I + L)^-1 blow up): the forward substitution stays exact."""
    T, D = 64, 8
    k = torch.full((1, 1, T, D), D**-0.5)
    q, v, beta = k.clone(), torch.randn(1, 1, T, D), torch.full((1, 1, T), 0.9)
    y, _, attn = inspect_delta(q, k, v, beta)
    assert relative(attn @ v, recurrent_delta(q, k, v, beta)[0]) <= 1e-4
    assert relative(attn.double(), effective_weights(q, k, beta)) <= 1e-4


def test_short_conv_is_causal_and_steps():
    torch.manual_seed(0)
    conv = ShortConv(5)
    x = torch.randn(2, 9, 5)
    y = conv(x)
    padded = F.pad(x.transpose(1, 2), (3, 0))  # (B, C, T + 3): torch's depthwise kernel
    assert relative(y, F.conv1d(padded, conv.weight, groups=5).transpose(1, 2)) <= 1e-6
    x2 = x.clone()
    x2[:, 6:] += 1.0  # the future does not change the past
    assert torch.equal(conv(x2)[:, :6], y[:, :6])
    cache = torch.zeros(2, 3, 5)
    for t in range(9):
        yt, cache = conv.step(x[:, t : t + 1], cache)
        assert torch.allclose(yt[:, 0], y[:, t], atol=1e-6)


def test_delta_model_step_rolls_to_parallel_logits():
    """The recurrent step (state S and the convolution window) gives the parallel logits."""
    torch.manual_seed(0)
    cfg = ModelConfig(vocab_size=50, n_layer=2, n_head=2, d_model=16, d_mlp=32, attention="delta")
    model = Transformer(cfg).eval()
    ids = torch.randint(0, 50, (1, 21))
    with torch.no_grad():
        full, cache = model(ids, inspect=True)
        S, window = torch.zeros(2, 2, 8, 8), torch.zeros(2, 3, 3, 16)
        for i in range(21):
            logits, S, window = model.step(ids[:, i : i + 1], torch.tensor([i]), S, window)
            assert relative(logits, full[:, i]) <= 1e-4
            assert relative(S, cache["state"][:, :, i]) <= 1e-4
    assert cfg.num_parameters() == model.num_parameters()


def test_training_and_evaluation_run_one_forward():
    """The val > train gap seen after 1,000 steps is not a path mismatch: train and eval
    mode give the same logits (no dropout; one chunked form), each batch row is its own
    sequence (the convolution's zero padding and the state do not leak across rows), and
    training.loss.evaluate_loss is the mean cross-entropy of that same forward."""
    from training.loss import evaluate_loss

    torch.manual_seed(0)
    cfg = ModelConfig(vocab_size=40, n_layer=2, n_head=2, d_model=16, d_mlp=32, attention="delta")
    model = Transformer(cfg)
    ids = torch.randint(0, 40, (3, 33))
    with torch.no_grad():
        train_logits = model.train()(ids)  # (B, T, V)
        eval_logits = model.eval()(ids)
        assert torch.equal(train_logits, eval_logits)
        for row in range(3):
            assert relative(model(ids[row : row + 1])[0], eval_logits[row]) <= 1e-5
        stream = ids.flatten()
        T = 16
        x, y = stream[: 6 * T].view(6, T), stream[1 : 6 * T + 1].view(6, T)
        want = F.cross_entropy(model(x).flatten(0, 1), y.flatten()).item()
        assert abs(evaluate_loss(model, stream, T) - want) <= 1e-5


def test_chunked_gradients_equal_the_recurrences():
    """Training differentiates the chunked form (torch's triangular solve): its gradients
    with respect to q, k, v and beta are the token-by-token recurrence's."""
    grads = []
    for form in (lambda *a: chunked_delta(*a, chunk=16)[0], lambda *a: recurrent_delta(*a)[0]):
        q, k, v, beta = (t.requires_grad_() for t in inputs(T=40))
        (form(q, k, v, beta) * torch.linspace(-1, 1, 8)).sum().backward()
        grads.append([t.grad for t in (q, k, v, beta)])
    for got, want in zip(*grads, strict=True):
        assert relative(got, want) <= 1e-4
