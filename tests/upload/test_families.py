"""Llama, Mistral, Qwen2 and GPT-NeoX folders: converted, and compared with ``transformers``
itself (a test-only oracle; eager attention, ``output_attentions=True``).

Each family's random folder (``tests/helpers/family_folders.py``: grouped-query
attention, rotary positions, Mistral's sliding window of 6 tokens, Qwen2's q/k/v biases,
GPT-NeoX's partial rotary and parallel residual) is read by the worker's converter and
run by our ``Transformer`` on three sentences, shorter and longer than the window:
logits within 1e-4 of the largest, attention within 1e-5."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from models.transformer import Transformer
from tests.helpers.family_folders import FAMILIES, family_model, save_family_folder
from upload.errors import UploadError
from upload.formats.hf_folder import read_folder
from upload.limits import local_file_limits

SENTENCES = [torch.randint(0, 299, (1, T), generator=torch.Generator().manual_seed(T))
             for T in (5, 12, 40)]  # fmt: skip


def converted(family: str, tmp_path, **config):
    """(transformers model, our Transformer) of a random folder of ``family``."""
    model = family_model(family, **config)
    folder = save_family_folder(model, tmp_path / f"tiny-{family}")
    limits = local_file_limits((folder / "model.safetensors").stat().st_size)
    cfg, _, state = read_folder(folder, limits)
    ours = Transformer(cfg).eval()
    ours.load_state_dict(state, strict=not cfg.tie_weights)
    return model, ours


@pytest.mark.parametrize("family", FAMILIES)
def test_each_family_equals_transformers(family, tmp_path):
    model, ours = converted(family, tmp_path)
    for ids in SENTENCES:
        with torch.no_grad():
            want = model(ids, output_attentions=True)
            logits, cache = ours(ids, inspect=True)
        want_attn = torch.stack([a[0] for a in want.attentions])  # (L, H, T, T)
        assert (logits - want.logits).abs().max() <= 1e-4 * want.logits.abs().max()
        assert (cache["attn"] - want_attn).abs().max() <= 1e-5  # GPT-Neo, unscaled: 5e-6
        assert cache["attn"].shape[1] == 4  # every query head, grouped or not
    assert ours.num_parameters() == ours.cfg.num_parameters()  # the upload limit's formula


def test_the_sliding_window_and_grouping_are_what_the_model_does(tmp_path):
    _, ours = converted("mistral", tmp_path)
    with torch.no_grad():
        _, cache = ours(SENTENCES[2], inspect=True)
    attn = cache["attn"].numpy()  # (L, H, T, T)
    i, j = np.indices(attn.shape[-2:])
    assert np.all(attn[..., (i - j) >= 6] == 0) and np.all(attn[..., j > i] == 0)
    assert np.all(attn[..., (i - j < 6) & (j <= i)] > 0)
    k = cache["k"].numpy()  # (L, H, T, D): 4 query heads read 2 key heads
    assert np.array_equal(k[:, 0], k[:, 1]) and not np.allclose(k[:, 1], k[:, 2])


def _refused(tmp_path, family: str, change: dict) -> str:
    folder = save_family_folder(family_model(family), tmp_path / family)
    data = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**data, **change}))
    with pytest.raises(UploadError) as err:
        read_folder(folder, local_file_limits(10**6))
    return str(err.value)


@pytest.mark.parametrize(
    ("family", "change", "said"),
    [
        ("llama", {"rope_parameters": {"rope_type": "llama3", "rope_theta": 5e5}},
         "rope type 'llama3' is not implemented"),
        ("llama", {"head_dim": 16}, "head_dim 16 is not hidden_size / num_attention_heads"),
        ("llama", {"num_key_value_heads": 3}, "'num_key_value_heads' must divide"),
        ("llama", {"attention_bias": True}, "'attention_bias' true with 'mlp_bias' false"),
        ("qwen2", {"use_sliding_window": True}, "'use_sliding_window' true"),
        ("llama", {"hidden_act": "relu"}, "hidden_act 'relu' is not supported"),
        ("llama", {"model_type": "falcon"}, "model_type 'falcon'"),
    ],
)  # fmt: skip
def test_what_is_not_implemented_is_refused_by_name(tmp_path, family, change, said):
    message = _refused(tmp_path, family, change)
    assert said in message and "\n" not in message
    assert message.startswith(f"{family}/config.json: ")


def test_a_missing_weight_is_named_as_the_file_names_it(tmp_path):
    from safetensors.torch import load_file, save_file

    folder = save_family_folder(family_model("llama"), tmp_path / "llama")
    state = load_file(folder / "model.safetensors")
    del state["model.layers.1.mlp.gate_proj.weight"]
    save_file(state, folder / "model.safetensors")
    with pytest.raises(
        UploadError, match=r"missing weights: model\.layers\.1\.mlp\.gate_proj\.weight"
    ):
        read_folder(folder, local_file_limits(10**6))


def test_a_rotary_context_past_what_the_app_analyses_is_taken_as_that(tmp_path):
    """Mistral's and Qwen2's 131,072 positions: rotary has no position table, so the
    context is the 65,536 tokens the app analyses (and --context shortens it further)."""
    folder = save_family_folder(
        family_model("mistral", max_position_embeddings=131072), tmp_path / "m"
    )
    cfg, _, _ = read_folder(folder, local_file_limits(10**6))
    assert cfg.context_length == 65536


@pytest.mark.parametrize("legacy", [True, False])
def test_a_llama_folder_with_its_sentencepiece_tokenizer_reads_as_transformers(tmp_path, legacy):
    """A Llama folder as people have it: a SentencePiece BPE tokenizer.json (byte fallback,
    BOS by its template). The app's ids are the tokenizer's, BOS first, and the logits on
    them transformers'."""
    from tokenizers import Tokenizer

    from models.tokenizer import encode
    from tests.helpers.llama_tokenizers import sentencepiece_bpe_json
    from upload.tokenizer_spec import build

    text = sentencepiece_bpe_json(legacy=legacy, vocab_size=400)
    model = family_model("llama", vocab_size=400)
    folder = save_family_folder(model, tmp_path / "llama", tokenizer_json=text)
    cfg, spec, state = read_folder(folder, local_file_limits(10**6))
    ours = Transformer(cfg).eval()
    ours.load_state_dict(state)
    sentence = "the cat sat on the mat, naïve 東"
    ids = encode(build(spec), sentence).ids
    assert ids == Tokenizer.from_str(text).encode(sentence).ids and ids[0] == 1  # <s> first
    with torch.no_grad():
        want, got = model(torch.tensor([ids])).logits, ours(torch.tensor([ids]))
    assert (got - want).abs().max() <= 1e-4 * want.abs().max()
