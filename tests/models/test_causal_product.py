"""The chunked causal product (the linear fast path) against the parallel and recurrent
forms: relative 1e-5 (max |a - b| <= 1e-5 * max |ref|), float32."""

import pytest
import torch

from models.attention import LinearAttention, MultiHeadAttention
from models.causal_product import CHUNK, chunked_causal_product
from models.config import ModelConfig

LINEAR = LinearAttention(ModelConfig(vocab_size=10, attention="linear", attn_eps=1e-6))
RTOL = 1e-5


def close(got: torch.Tensor, ref: torch.Tensor) -> bool:
    assert got.shape == ref.shape, (got.shape, ref.shape)
    got, ref = got.detach(), ref.detach()
    return float((got - ref).abs().max()) <= RTOL * float(ref.abs().max())


def qkv(T: int, H: int = 3, D: int = 8, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(3, 2, H, T, D, generator=g).unbind(0)  # (B=2, H, T, d_head) each


def chunked(q, k, v, chunk=CHUNK):
    return chunked_causal_product(LINEAR.phi(q), LINEAR.phi(k), v, LINEAR.eps, chunk)


# T = 1, T < C, T = C, one past C, several chunks with a remainder; with C = 4 as well,
# so many chunks are carried at small T.
@pytest.mark.parametrize("chunk", [4, CHUNK])
@pytest.mark.parametrize("T", [1, 3, 9, 64, 65, 150])
def test_chunked_equals_parallel_and_recurrent(T, chunk):
    q, k, v = qkv(T, seed=T)
    par, _, _ = LINEAR.parallel(q, k, v)  # (B, H, T, d_head)
    rec, _, _ = LINEAR.recurrent_loop(q, k, v)  # (B, H, T, d_head)
    got = chunked(q, k, v, chunk)
    assert close(got, par) and close(got, rec)


def test_chunked_equals_the_prefix_state_readout_at_a_long_length():
    """T = 1,000 (16 chunks, a remainder of 40): today's inspect form, every prefix state."""
    q, k, v = qkv(1000, H=2, D=16, seed=1)
    S, z = LINEAR.states(k, v)  # (B, H, T, D, D), (B, H, T, D)
    assert close(chunked(q, k, v), LINEAR.readout(q, S, z))


def test_chunked_is_causal():
    """A later key or value changes no earlier output, also across a chunk boundary."""
    q, k, v = qkv(10, seed=2)
    base = chunked(q, k, v, chunk=4)
    k2, v2 = k.clone(), v.clone()
    k2[:, :, 6] += 3.0
    v2[:, :, 6] += 100.0
    moved = chunked(q, k2, v2, chunk=4)
    assert torch.equal(moved[:, :, :6], base[:, :, :6])
    assert not torch.allclose(moved[:, :, 6:], base[:, :, 6:])


def test_the_fast_path_is_chunked_and_inspect_and_training_are_not():
    """eval() without inspect runs the chunked form; training and inspect keep the parallel
    form (inspect also names the prefix states), and all give the same output."""
    torch.manual_seed(3)
    attn = MultiHeadAttention(ModelConfig(vocab_size=10, attention="linear", d_model=16, n_head=2))
    x = torch.randn(2, 70, 16)  # (B, T, C): two chunks
    q, k, v = attn.qkv(x)  # (B, H, T, d_head)
    ref = attn.o_proj(LINEAR.parallel(q, k, v)[0].transpose(1, 2).reshape(2, 70, 16))
    fast = attn.eval()(x)
    y, cache = attn.mixing.mix(q, k, v, inspect=False, training=False)
    assert cache == {} and torch.equal(y, chunked(q, k, v))
    assert close(fast, ref)
    out, cache = attn(x, inspect=True)
    assert cache["state"].shape == (2, 2, 70, 8, 8) and close(out, ref)
    y_train, cache = attn.mixing.mix(q, k, v, inspect=False, training=True)
    assert "attn" in cache and torch.equal(y_train, LINEAR.parallel(q, k, v)[0])


def test_chunk_none_is_the_prefix_state_form():
    """``LinearAttention.chunk = None`` (the bench's "before" graph) reads every prefix
    state out, as the fast form did before; it equals the chunked form."""
    mixing = LinearAttention(ModelConfig(vocab_size=10, attention="linear"))
    q, k, v = qkv(70, seed=4)
    chunked_y, _ = mixing.mix(q, k, v, inspect=False, training=False)
    mixing.chunk = None
    y, cache = mixing.mix(q, k, v, inspect=False, training=False)
    S, z = LINEAR.states(k, v)  # (B, H, T, D, D), (B, H, T, D)
    assert cache == {} and torch.equal(y, LINEAR.readout(q, S, z)) and close(chunked_y, y)
