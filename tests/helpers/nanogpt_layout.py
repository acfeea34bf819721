"""nanoGPT's exact checkpoint layout, built in memory: shared by the conversion,
app-upload and browser tests."""

from __future__ import annotations

import io
import pickle

import torch
import torch.nn.functional as F

TEXT = "First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak."
CHARS = sorted(set(TEXT))
STOI = {ch: i for i, ch in enumerate(CHARS)}
ITOS = dict(enumerate(CHARS))
V = len(CHARS)
ARGS = dict(n_layer=2, n_head=2, n_embd=16, block_size=16, bias=True, vocab_size=V, dropout=0.0)


# nanoGPT's shakespeare_char vocabulary: the 65 characters of tinyshakespeare, sorted.
SHAKESPEARE_CHARS = "\n !$&',-.3:;?ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def meta_bytes(stoi=STOI, itos=ITOS) -> bytes:
    """nanoGPT's data/shakespeare_char/prepare.py writes exactly this dict."""
    return pickle.dumps({"vocab_size": len(stoi), "itos": itos, "stoi": stoi})


def meta_of(chars: str) -> bytes:
    """:func:`meta_bytes` of a character vocabulary ``chars`` (ids in their order)."""
    return meta_bytes({c: i for i, c in enumerate(chars)}, dict(enumerate(chars)))


def nanogpt_state(args: dict, seed: int = 0, mask_buffer: bool = False, std: float = 0.2) -> dict:
    """A random state dict in nanoGPT's GPT layout (lm_head tied to wte: the same tensor),
    weights of standard deviation ``std`` (nanoGPT initialises with 0.02)."""
    g = torch.Generator().manual_seed(seed)
    C, bs, bias = args["n_embd"], args["block_size"], args["bias"]

    def rnd(*shape, base=0.0):
        return base + std * torch.randn(*shape, generator=g)

    sd = {
        "transformer.wte.weight": rnd(args["vocab_size"], C),
        "transformer.wpe.weight": rnd(bs, C),
    }
    for i in range(args["n_layer"]):
        p = f"transformer.h.{i}."
        for name, (n_out, n_in) in {
            "attn.c_attn": (3 * C, C),
            "attn.c_proj": (C, C),
            "mlp.c_fc": (4 * C, C),
            "mlp.c_proj": (C, 4 * C),
        }.items():
            sd[p + name + ".weight"] = rnd(n_out, n_in)
            if bias:
                sd[p + name + ".bias"] = rnd(n_out)
        for ln in ("ln_1", "ln_2"):
            sd[p + ln + ".weight"] = rnd(C, base=1.0)
            if bias:
                sd[p + ln + ".bias"] = rnd(C)
        if mask_buffer:  # nanoGPT registers it when flash attention is unavailable
            sd[p + "attn.bias"] = torch.tril(torch.ones(bs, bs)).view(1, 1, bs, bs)
    sd["transformer.ln_f.weight"] = rnd(C, base=1.0)
    if bias:
        sd["transformer.ln_f.bias"] = rnd(C)
    sd["lm_head.weight"] = sd["transformer.wte.weight"]
    return sd


def ckpt_bytes(sd: dict, args: dict, prefix: str = "", optimizer: bool = True) -> bytes:
    """torch.save of nanoGPT's train.py checkpoint dict (with a real AdamW state)."""
    opt_state = {}
    if optimizer:
        params = [
            torch.nn.Parameter(t.clone()) for k, t in sd.items() if not k.endswith("attn.bias")
        ]
        opt = torch.optim.AdamW(params, lr=1e-3)
        for p in params:
            p.grad = torch.ones_like(p)
        opt.step()
        opt_state = opt.state_dict()
    checkpoint = {
        "model": {prefix + k: v for k, v in sd.items()},
        "optimizer": opt_state,
        "model_args": dict(args),
        "iter_num": 250,
        "best_val_loss": torch.tensor(1.47),
        "config": {"dataset": "shakespeare_char", "batch_size": 64, "compile": bool(prefix)},
    }
    buf = io.BytesIO()
    torch.save(checkpoint, buf)
    return buf.getvalue()


def nanogpt_forward(sd: dict, args: dict, idx: torch.Tensor) -> torch.Tensor:
    """nanoGPT's GPT.forward (model.py), written out: (B, T) ids -> (B, T, V) logits."""
    C, nh = args["n_embd"], args["n_head"]

    def ln(x, p):  # nanoGPT's LayerNorm with optional bias
        return F.layer_norm(x, (C,), sd[p + ".weight"], sd.get(p + ".bias"), 1e-5)

    def linear(x, p):
        return F.linear(x, sd[p + ".weight"], sd.get(p + ".bias"))

    B, T = idx.shape
    x = sd["transformer.wte.weight"][idx] + sd["transformer.wpe.weight"][:T]  # (B, T, C)
    for i in range(args["n_layer"]):
        p = f"transformer.h.{i}"
        q, k, v = linear(ln(x, p + ".ln_1"), p + ".attn.c_attn").split(C, dim=2)  # (B, T, C)
        q, k, v = (t.view(B, T, nh, C // nh).transpose(1, 2) for t in (q, k, v))  # (B, nh, T, hs)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # (B, T, C)
        x = x + linear(y, p + ".attn.c_proj")  # (B, T, C)
        h = F.gelu(linear(ln(x, p + ".ln_2"), p + ".mlp.c_fc"))  # (B, T, 4C), exact GELU
        x = x + linear(h, p + ".mlp.c_proj")  # (B, T, C)
    return F.linear(ln(x, "transformer.ln_f"), sd["lm_head.weight"])  # (B, T, V)


# A character model whose ckpt.pt (weights + AdamW's two moments) is over the browser's
# 50 MB while its weights (4.9M parameters, 19.5 MB) are well under it.
LARGE_ARGS = dict(ARGS, n_layer=2, n_head=4, n_embd=448, block_size=64, vocab_size=65)


def write_checkpoint(folder, args: dict, seed: int = 0, chars: str = SHAKESPEARE_CHARS):
    """nanoGPT's ``ckpt.pt`` (with its AdamW state) and the ``meta.pkl`` of ``chars``
    written to ``folder``: (state dict, ckpt path, meta path). The weights are nanoGPT's
    initial scale (std 0.02), so that float32 logits of a wide model agree within 1e-5
    whatever the order of the sums."""
    from pathlib import Path

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    sd = nanogpt_state(args, seed=seed, std=0.02)
    ckpt, meta_path = folder / "ckpt.pt", folder / "meta.pkl"
    ckpt.write_bytes(ckpt_bytes(sd, args))
    meta_path.write_bytes(meta_of(chars))
    return sd, ckpt, meta_path
