"""The model: inspect cache contract, recurrent step, positional encodings, config."""

import pytest
import torch

from models.config import ATTENTION_KINDS, ModelConfig
from models.contract import block_outputs, inspect_outputs
from models.transformer import Transformer, sinusoidal_encoding


def make(kind="softmax", **kw):
    torch.manual_seed(0)
    cfg = ModelConfig(
        vocab_size=50,
        n_layer=2,
        n_head=2,
        d_model=16,
        d_mlp=32,
        context_length=12,
        attention=kind,
        **kw,
    )
    return Transformer(cfg).eval()


@pytest.mark.parametrize("kind", ATTENTION_KINDS)
def test_inspect_cache_follows_contract(kind):
    model = make(kind)
    ids = torch.randint(0, 50, (1, 7))
    logits, cache = model(ids, inspect=True)
    assert set(cache) | {"logits"} == set(inspect_outputs(kind) + block_outputs(2))
    assert cache["blocks.1.mlp.hidden"].shape == (7, model.cfg.d_mlp)
    post = cache["blocks.0.resid_pre"] + cache["blocks.0.attn.out"] + cache["blocks.0.mlp.out"]
    assert torch.allclose(cache["blocks.0.resid_post"], post, atol=1e-6)
    assert torch.equal(cache["blocks.0.resid_post"], cache["blocks.1.resid_pre"])
    assert logits.shape == (1, 7, 50)
    assert cache["attn"].shape == (2, 2, 7, 7)
    assert cache["q"].shape == (2, 2, 7, 8)
    assert cache["pos_enc"].shape == (7, 16)
    if kind != "delta":  # DeltaNet's implied rows need not sum to 1 (tests/models/test_delta.py)
        assert torch.allclose(cache["attn"].sum(-1), torch.ones(2, 2, 7), atol=1e-5)
    assert torch.allclose(model(ids), logits, atol=1e-5)  # fast path == inspect path
    if kind == "linear":
        assert cache["state"].shape == (2, 2, 7, 8, 8)
        assert cache["normalizer"].shape == (2, 2, 7, 8)


def test_step_rolls_to_parallel_logits():
    model = make("linear")
    ids = torch.randint(0, 50, (1, 12))
    full, cache = model(ids, inspect=True)
    S, z = torch.zeros(2, 2, 8, 8), torch.zeros(2, 2, 8)
    for i in range(12):
        logits, S, z = model.step(ids[:, i : i + 1], torch.tensor([i]), S, z)
        assert (logits - full[:, i]).abs().max() <= 1e-5
        assert (S - cache["state"][:, :, i]).abs().max() <= 1e-5 * max(1, S.abs().max().item())


def test_step_refused_for_softmax():
    model = make("softmax")
    with pytest.raises(RuntimeError):
        model.step(
            torch.zeros(1, 1, dtype=torch.long),
            torch.zeros(1, dtype=torch.long),
            torch.zeros(2, 2, 8, 8),
            torch.zeros(2, 2, 8),
        )


def test_sinusoidal_encoding_values():
    pe = sinusoidal_encoding(torch.arange(5), 8)
    assert pe.shape == (5, 8)
    assert torch.allclose(pe[:, 0], torch.sin(torch.arange(5.0)))
    assert torch.allclose(pe[:, 1], torch.cos(torch.arange(5.0)))
    assert torch.allclose(pe[3, 2], torch.sin(torch.tensor(3.0) / 10000 ** (2 / 8)))


def test_learned_positions_and_no_bias():
    model = make("softmax", position_scheme="learned", bias=False, ln_bias=False)
    assert model.wpe.weight.shape == (12, 16)
    assert model.blocks[0].attn.q_proj.bias is None and model.blocks[0].ln_1.bias is None
    _, cache = model(torch.randint(0, 50, (1, 4)), inspect=True)
    assert torch.equal(cache["pos_enc"], model.wpe.weight[:4])


def test_tied_head_shares_embedding():
    model = make()
    assert model.lm_head.weight is model.wte.weight


@pytest.mark.parametrize(
    "kw",
    [dict(attention="cosine"), dict(position_scheme="rope"), dict(d_model=15), dict(n_layer=0)],
)
def test_config_rejects_bad_values(kw):
    base = dict(vocab_size=10, n_head=2, d_model=16)
    with pytest.raises(ValueError):
        ModelConfig(**{**base, **kw})


def test_config_json_roundtrip():
    cfg = ModelConfig(vocab_size=10, attention="linear")
    assert ModelConfig.from_json(cfg.to_json()) == cfg
    assert cfg.to_dict()["d_head"] == cfg.d_model // cfg.n_head
    with pytest.raises(ValueError):
        ModelConfig.from_dict({**cfg.to_dict(), "d_head": 3})


def test_config_reads_the_legacy_pos_enc_key():
    """Checkpoints and graphs written before the rename carry ``pos_enc`` for the scheme
    (the shipped ones included): it is read as ``position_scheme``."""
    cfg = ModelConfig(vocab_size=10, position_scheme="learned")
    legacy = {k: v for k, v in cfg.to_dict().items() if k != "position_scheme"}
    assert ModelConfig.from_dict({**legacy, "pos_enc": "learned"}) == cfg
    assert "pos_enc" not in cfg.to_dict()  # the name is the inspect graph's array only


def test_gpt2_switches_are_written_only_when_used():
    """``activation`` and ``ln_eps`` keep every config written before them byte for byte
    (defaults are left out of the JSON) and round-trip when set."""
    plain = ModelConfig(vocab_size=10)
    assert "activation" not in plain.to_dict() and "ln_eps" not in plain.to_dict()
    gpt2 = ModelConfig(vocab_size=10, activation="gelu_new", ln_eps=1e-6)
    assert gpt2.to_dict()["activation"] == "gelu_new" and gpt2.to_dict()["ln_eps"] == 1e-6
    assert ModelConfig.from_json(gpt2.to_json()) == gpt2
    for bad in (dict(activation="relu"), dict(ln_eps=0), dict(ln_eps=True)):
        with pytest.raises(ValueError):
            ModelConfig(vocab_size=10, **bad)


def test_gelu_new_is_gpt2s_tanh_approximation_and_ln_eps_reaches_layernorm():
    import math

    from models.transformer import MLP

    cfg = ModelConfig(vocab_size=10, n_head=2, d_model=16, d_mlp=32, activation="gelu_new")
    mlp = MLP(cfg)
    x = torch.randn(2, 5, 16)
    h = mlp.c_fc(x)  # (B, T, d_mlp)
    tanh = 0.5 * h * (1 + torch.tanh(math.sqrt(2 / math.pi) * (h + 0.044715 * h**3)))
    assert torch.allclose(mlp(x), mlp.c_proj(tanh), atol=1e-6)
    exact = MLP(ModelConfig(vocab_size=10, n_head=2, d_model=16, d_mlp=32))
    exact.load_state_dict(mlp.state_dict())
    assert (exact(x) - mlp(x)).abs().max() > 1e-6  # a different function
    model = Transformer(ModelConfig(vocab_size=10, n_head=2, d_model=16, ln_eps=1e-3))
    assert {m.eps for m in model.modules() if isinstance(m, torch.nn.LayerNorm)} == {1e-3}
