"""The lab forward (models/lab.py) in PyTorch, on the shipped checkpoints: with nothing
overridden it is the model; a zeroed head equals a forward whose W_O never sees that
head's slice (a pre-hook, not the lab code); the logit lens' last row is the model's own
prediction; the direct logit attribution sums to the logit; patching every residual cell
from the clean run gives the clean logits, patching none the corrupted ones."""

from __future__ import annotations

import pytest
import torch

from models.checkpoint import load_checkpoint, shipped_checkpoint
from models.config import SHIPPED_KINDS
from models.lab import example_inputs, lab_forward


@pytest.fixture(scope="module", params=SHIPPED_KINDS)
def model(request):
    model, _, _ = load_checkpoint(shipped_checkpoint(request.param))
    return model.eval()


def run(model, ids, **set_):
    """lab_forward on ids (B, T) with the overrides in ``set_`` (the rest zero) -> dict."""
    _, *zeros = example_inputs(model, B=ids.shape[0], T=ids.shape[1])
    names = ("head_mask", "head_values", "resid_mask", "resid_values")
    args = [set_.get(n, z) for n, z in zip(names, zeros, strict=True)]
    with torch.no_grad():
        out = lab_forward(model, ids, *args)
    keys = ("logits", "head_out", "resid", "lens_top", "lens_top_prob", "lens_target_prob",
            "target", "dla_heads", "dla_mlp", "dla_embed", "dla_bias")  # fmt: skip
    return dict(zip(keys, out, strict=True))


def ids_of(model, T=14, B=1, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, model.cfg.vocab_size, (B, T), generator=g)


def close(a, b, rel=1e-5):
    return float((a - b).abs().max()) <= rel * max(1.0, float(b.abs().max()))


def test_no_override_is_the_model(model):
    ids = ids_of(model, B=2)
    out = run(model, ids)
    with torch.no_grad():
        logits, cache = model(ids[:1], inspect=True)
    rel = 1e-5 if model.cfg.attention != "delta" else 1e-4  # chunked solve vs the inspect scan
    assert close(out["logits"][:1], logits, rel)
    assert close(out["head_out"][0], cache["head_out"], rel)
    for layer in range(model.cfg.n_layer):
        assert close(out["resid"][0, layer], cache[f"blocks.{layer}.resid_pre"], rel)
    assert close(out["resid"][0, -1], cache[f"blocks.{model.cfg.n_layer - 1}.resid_post"], rel)


@pytest.mark.parametrize("layer,head", [(0, 0), (1, 3), (2, 1)])
def test_zeroed_head_equals_a_forward_without_its_slice(model, layer, head):
    ids = ids_of(model)
    T, D = ids.shape[1], model.cfg.d_head
    mask = torch.zeros(1, model.cfg.n_layer, model.cfg.n_head, T)
    mask[0, layer, head] = 1.0
    ablated = run(model, ids, head_mask=mask)["logits"]

    def drop(module, args):  # W_O's input (B, T, C): this head's d_head columns zeroed
        x = args[0].clone()
        x[..., head * D : (head + 1) * D] = 0
        return (x,)

    hook = model.blocks[layer].attn.o_proj.register_forward_pre_hook(drop)
    try:
        with torch.no_grad():
            ref = model(ids)  # (1, T, V)
    finally:
        hook.remove()
    assert close(ablated, ref)
    assert not close(ablated, run(model, ids)["logits"])  # the head did something


def test_logit_lens_last_row_is_the_prediction(model):
    out = run(model, ids_of(model))
    probs = out["logits"][0].softmax(-1)  # (T, V)
    assert torch.equal(out["lens_top"][-1], probs.argmax(-1))
    assert torch.equal(out["target"], probs.argmax(-1))
    assert torch.allclose(out["lens_top_prob"][-1], probs.max(-1).values, atol=1e-6)
    assert torch.all(out["lens_target_prob"] <= out["lens_top_prob"] + 1e-6)


def test_direct_logit_attribution_sums_to_the_logit(model):
    out = run(model, ids_of(model, T=20, seed=3))
    total = (
        out["dla_heads"].sum((0, 1)) + out["dla_mlp"].sum(0) + out["dla_embed"] + out["dla_bias"]
    )
    logit = out["logits"][0].gather(-1, out["target"][:, None])[:, 0]  # (T,)
    assert torch.allclose(total, logit, atol=1e-4 * max(1.0, float(logit.abs().max())))


def test_patching_every_residual_cell_gives_the_clean_run(model):
    clean, corrupted = ids_of(model, seed=1), ids_of(model, seed=2)
    a, b = run(model, clean), run(model, corrupted)
    K, T = model.cfg.n_layer + 1, clean.shape[1]
    for boundary in (0, K - 1):  # the embedding, or the stream the final LayerNorm reads
        mask = torch.zeros(1, K, T)
        mask[0, boundary] = 1.0
        patched = run(model, corrupted, resid_mask=mask, resid_values=a["resid"])
        assert close(patched["logits"], a["logits"])
    assert close(run(model, corrupted)["logits"], b["logits"])  # none patched: corrupted
    heads = torch.ones(1, model.cfg.n_layer, model.cfg.n_head, T)  # every head, from clean
    patched = run(model, corrupted, head_mask=heads, head_values=a["head_out"])
    assert close(patched["head_out"], a["head_out"])
    assert not close(patched["logits"], a["logits"])  # the embedding and MLPs still differ
