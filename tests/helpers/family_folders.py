"""Random Hugging Face folders of the Llama family and GPT-NeoX, built with
``transformers`` (a test-only oracle): 2 layers, 4 query heads, d_model 32, V = 300,
saved as ``save_pretrained`` writes them beside a tokenizer.json. Weights are drawn wider
than the models' initialisation so that attention is far from uniform."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.gpt2_folder import VOCAB
from tests.helpers.gpt2_tokenizer import gpt2_style_tokenizer

FAMILIES = ("llama", "mistral", "qwen2", "gpt_neox", "gpt_neo")
BASE = dict(vocab_size=VOCAB, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
            num_attention_heads=4, max_position_embeddings=128, bos_token_id=VOCAB - 1,
            eos_token_id=VOCAB - 1)  # fmt: skip
# Each family's distinguishing choices: GQA (2 key heads for 4 query heads), Mistral's
# window shorter than a test sentence, Qwen2's tied embedding, NeoX's partial rotary,
# GPT-Neo's local layer (a window of 6) after a global one.
EXTRA = {
    "llama": dict(
        num_key_value_heads=2, rope_parameters={"rope_type": "default", "rope_theta": 500.0}
    ),
    "mistral": dict(num_key_value_heads=2, sliding_window=6),
    "qwen2": dict(num_key_value_heads=1, tie_word_embeddings=True),
    "gpt_neox": dict(
        rope_parameters={
            "rope_type": "default",
            "rope_theta": 10000.0,
            "partial_rotary_factor": 0.5,
        }
    ),
    "gpt_neo": dict(attention_types=[[["global", "local"], 1]], window_size=6),
}
# GPT-Neo's config names its sizes its own way
NEO_SIZES = {"num_hidden_layers": "num_layers", "num_attention_heads": "num_heads"}


def family_model(family: str, seed: int = 0, **config):
    """A random ``<Family>ForCausalLM`` in eval mode with eager attention."""
    import torch
    import transformers

    names = {"llama": "Llama", "mistral": "Mistral", "qwen2": "Qwen2", "gpt_neox": "GPTNeoX",
             "gpt_neo": "GPTNeo"}  # fmt: skip
    Config = getattr(transformers, f"{names[family]}Config")
    Model = getattr(transformers, f"{names[family]}ForCausalLM")
    base = BASE if family != "gpt_neo" else {NEO_SIZES.get(k, k): v for k, v in BASE.items()}
    cfg = Config(**{**base, **EXTRA[family], **config})
    cfg._attn_implementation = "eager"
    torch.manual_seed(seed)
    model = Model(cfg).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            gain = ("norm" in name or ".ln_" in name) and name.endswith("weight")
            p.copy_((1.0 if gain else 0.0) + 0.3 * torch.randn_like(p))
    return model


def save_family_folder(model, folder: Path, tokenizer_json: str | None = None) -> Path:
    """``model.save_pretrained(folder)`` plus ``tokenizer.json`` (default the GPT-2-style
    byte-level test tokenizer, which GPT-NeoX's is; any other JSON as given)."""
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    text = tokenizer_json or gpt2_style_tokenizer()
    (folder / "tokenizer.json").write_text(text, encoding="utf-8")
    return folder
