"""The bench's GPT-2-shaped folder (written without transformers) is a real GPT-2 folder:
transformers loads it and our conversion of it gives transformers' logits; the bench's
measurement runs on the converted graphs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bench.gpt2_small import GPT2_SMALL, byte_level_tokenizer, convert, measure, write_folder
from inference.runtime import load_graphs
from upload.spec_checks import check_spec
from upload.tokenizer_spec import spec_from_json

TINY = dict(n_layer=2, n_head=2, n_embd=16, n_positions=32, vocab_size=300)


def test_the_byte_level_tokenizer_has_gpt2s_size_and_kind():
    spec = spec_from_json(byte_level_tokenizer(), "tokenizer.json")
    assert spec["kind"] == "bpe" and len(spec["vocab"]) == GPT2_SMALL["vocab_size"] == 50257
    assert spec["special"] == ["<|endoftext|>"] and spec["vocab"]["<|endoftext|>"] == 50256
    check_spec(spec, 50257, "tokenizer.json")  # the server's checks: merges join known tokens


@pytest.mark.slow
def test_the_bench_folder_converts_to_transformers_outputs_and_is_measured(tmp_path):
    from transformers import GPT2LMHeadModel

    folder = write_folder(tmp_path / "gpt2-tiny", seed=1, **TINY)
    done = convert(folder, tmp_path / "out")
    assert done["parameters"] == GPT2LMHeadModel.from_pretrained(folder).num_parameters()
    reference = GPT2LMHeadModel.from_pretrained(folder, attn_implementation="eager").eval()
    ours = load_graphs(tmp_path / "out" / "gpt2-tiny.inspect.onnx")
    ids = list(range(0, 300, 10))  # (30,)
    with torch.no_grad():
        want = reference(torch.tensor([ids])).logits[0].numpy()  # (T, V)
    assert np.abs(ours.logits(ids) - want).max() <= 1e-4 * np.abs(want).max()
    row = measure(tmp_path / "out", "gpt2-tiny", T=9, rounds=1)
    assert row["T"] == 9 and row["served"] and row["median_s"] > 0
    assert row["peak_rss_mb"] >= row["loaded_rss_mb"] > 0 and row["analysis_mb"] > 0
