"""Hugging Face folders built in the test with ``transformers`` (a test-only
oracle): random-weight ``GPT2LMHeadModel``s saved as ``save_pretrained`` writes them,
beside a GPT-2-style ``tokenizer.json`` (``tests/helpers/gpt2_tokenizer.py``)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.gpt2_tokenizer import gpt2_style_tokenizer

VOCAB = 300  # the test tokenizer's ids: 256 bytes, merges, <|endoftext|>
SIZES = dict(n_layer=2, n_head=2, n_embd=16, n_positions=32)


def gpt2_model(tie: bool = True, seed: int = 0, **config):
    """A random ``GPT2LMHeadModel`` (eval mode, eager attention so that it returns its
    attention weights) of ``SIZES`` and ``VOCAB`` tokens, overridden by ``config``.

    The weights are drawn wider than GPT-2's initialisation (std 0.3, LayerNorm gains
    around 1), so that attention is far from uniform and the logits spread."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(
        **{**SIZES, "vocab_size": VOCAB, **config},
        tie_word_embeddings=tie,
        bos_token_id=VOCAB - 1,
        eos_token_id=VOCAB - 1,
    )
    cfg._attn_implementation = "eager"
    torch.manual_seed(seed)
    model = GPT2LMHeadModel(cfg).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            gain = name.endswith(("ln_1.weight", "ln_2.weight", "ln_f.weight"))
            p.copy_((1.0 if gain else 0.0) + 0.3 * torch.randn_like(p))
    return model


def save_folder(model, folder: Path, weights: str = "model.safetensors", prefix: bool = True):
    """``model`` saved into ``folder`` as a Hugging Face folder with ``tokenizer.json``:
    ``save_pretrained`` (``model.safetensors``), or ``torch.save`` of its state dict
    (``pytorch_model.bin``, what ``save_pretrained(safe_serialization=False)`` wrote before
    transformers 5), with the ``transformer.`` prefix or without it (``GPT2Model``'s
    names, as the hub's gpt2 and distilgpt2 files have them)."""
    import torch

    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    if weights == "pytorch_model.bin" or not prefix:
        (folder / "model.safetensors").unlink()
        state = {
            (k if prefix else k.removeprefix("transformer.")): v
            for k, v in model.state_dict().items()
        }
        if not prefix:  # GPT2Model files also hold the causal-mask buffers
            C = model.config.n_positions
            for i in range(model.config.n_layer):
                state[f"h.{i}.attn.bias"] = torch.tril(torch.ones(C, C)).view(1, 1, C, C)
        if weights == "pytorch_model.bin":
            torch.save(state, folder / weights)
        else:
            from safetensors.torch import save_file

            tied = model.config.tie_word_embeddings
            save_file(
                {
                    k: v.contiguous()
                    for k, v in state.items()
                    if not (tied and k == "lm_head.weight")
                },
                str(folder / weights),
            )
    (folder / "tokenizer.json").write_text(gpt2_style_tokenizer(model.config.vocab_size))
    return folder
