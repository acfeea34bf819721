"""Foreign ONNX as people export it (issue #23): a random Hugging Face GPT-2 exported by
``torch.onnx.export`` (TorchScript and dynamo exporters, with and without an
attention_mask, fixed and dynamic T, external data), uploaded with its tokenizer.json
through ``upload.load.load_upload``: the attention shown equals transformers' own
``output_attentions``. Nothing is mocked; the exports are made once per session."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from tokenizers import Tokenizer

from models.config import ModelConfig
from tests.helpers.foreign_lm import char_tokenizer_json, tiny_lm
from tests.helpers.foreign_lm import export as export_tiny
from tests.helpers.hf_exports import (
    SIX,
    Export,
    V,
    export,
    export_with_past,
    hf_gpt2,
    operators,
    reference,
    small_causal_lm,
    tokenizer_json,
)
from tests.helpers.nanogpt_layout import STOI
from upload.convert import main
from upload.limits import MAX_ACTIVATION_ELEMENTS
from upload.load import load_upload
from upload.onnx_checks import ALLOWED_OPS, HF_EXPORT_OPS, OPSET_23_OPS
from upload.onnx_foreign import _config_fields
from upload.sizes import activation_elements, longest_context

SENTENCE = "Before we proceed any further, hear me speak. " * 8  # more than 64 tokens
SELF_CONTAINED = [how.label for how in SIX if not how.external]


def sentence_ids(n: int) -> list[int]:
    """The first ``n`` token ids of SENTENCE in the models' 300-id GPT-2-style vocabulary."""
    ids = Tokenizer.from_str(tokenizer_json().decode()).encode(SENTENCE).ids
    assert len(ids) >= n
    return ids[:n]


def assert_like_transformers(uploaded, model, ids: list[int]) -> None:
    """Attention within 1e-4 relative of transformers' output_attentions; logits too."""
    out = uploaded.inspect(ids)
    logits, attn = reference(model, ids)  # (1, T, V), (L, H, T, T)
    assert out["attn"].shape == attn.shape == (2, 4, len(ids), len(ids))
    np.testing.assert_allclose(out["attn"], attn, rtol=1e-4, atol=1e-9)
    np.testing.assert_allclose(out["logits"], logits, rtol=1e-4, atol=1e-5)


def upload(path, tokenizer: bytes | None = None):
    return load_upload({"model.onnx": path.read_bytes(), "tokenizer.json": tokenizer_json()})


def test_real_exports_need_exactly_the_operators_added_for_them(hf_exports):
    """The allow-list grew by what real exports use and by nothing else."""
    used = set().union(*(operators(path) for path in hf_exports[1].values()))
    assert used <= ALLOWED_OPS, used - ALLOWED_OPS
    assert HF_EXPORT_OPS == used - (ALLOWED_OPS - HF_EXPORT_OPS) == {"IsNaN", "GatherND"}


@pytest.mark.parametrize("label", SELF_CONTAINED)
def test_each_export_shows_transformers_own_attention(hf_exports, label):
    model, paths = hf_exports
    how = next(h for h in SIX if h.label == label)
    uploaded = upload(paths[label])
    try:
        cfg, notes = uploaded.config, " ".join(uploaded.card.notes)
        assert (cfg.n_layer, cfg.n_head, cfg.vocab_size) == (2, 4, V)
        assert cfg.context_length == (how.fixed_T or model.config.n_positions)
        assert ("attention_mask = 1 for every token" in notes) == how.mask
        if how.fixed_T:
            assert "The graph takes a fixed 64 tokens: a shorter sentence is padded" in notes
            assert "id 299 ('<|endoftext|>')" in notes and "checked: the padding" in notes
            assert ("masked out by attention_mask = 0" in notes) == how.mask
        assert_like_transformers(uploaded, model, sentence_ids(64))
        assert_like_transformers(uploaded, model, sentence_ids(9))  # padded when T is fixed
        assert uploaded.logits(sentence_ids(5)).shape == (5, V)
    finally:
        uploaded.close()


def test_external_data_is_refused_with_the_command_that_folds_it(hf_exports, tmp_path, capsys):
    model, paths = hf_exports
    (label,) = [how.label for how in SIX if how.external]
    path = paths[label]
    with pytest.raises(ValueError, match="python -m upload.convert model.onnx --out converted/"):
        upload(path)
    main([str(path), "--out", str(tmp_path / "converted")])
    out = capsys.readouterr().out
    folded = tmp_path / "converted" / "model.onnx"
    assert f"wrote {folded}" in out and "self-contained, checked as an upload" in out
    graph = onnx.load(folded, load_external_data=False)
    assert not any(t.external_data for t in graph.graph.initializer)
    tokenizer = tmp_path / "tokenizer.json"
    tokenizer.write_bytes(tokenizer_json())
    main([str(path), "--out", str(tmp_path / "checked"), "--tokenizer", str(tokenizer)])
    out = capsys.readouterr().out  # folded, then opened as the uploader does
    assert "accepted: model.onnx" in out and "source: ONNX (foreign)" in out
    assert "note: Fed with the token ids (input_ids): attention_mask = 1" in out
    uploaded = upload(folded)
    try:
        assert uploaded.config.context_length == model.config.n_positions
        assert_like_transformers(uploaded, model, sentence_ids(64))
    finally:
        uploaded.close()


def test_folding_reads_only_files_beside_the_graph(hf_exports, tmp_path, capsys):
    path = hf_exports[1][next(h.label for h in SIX if h.external)]
    proto = onnx.load(path, load_external_data=False)
    target = proto.graph.initializer[0]
    where = next(e for e in target.external_data if e.key == "location")
    where.value = "../../etc/passwd"
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(proto.SerializeToString())
    with pytest.raises(SystemExit):
        main([str(bad), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert err == (
        f"refused: bad.onnx: tensor '{target.name}' points to '../../etc/passwd', "
        "not beside the graph"
    )
    assert not (tmp_path / "out").exists()


def test_past_key_values_and_positions_are_fed_and_extra_outputs_ignored(hf_exports, tmp_path):
    model = hf_exports[0]
    uploaded = upload(export_with_past(model, tmp_path / "model.onnx"))
    try:
        notes = " ".join(uploaded.card.notes)
        assert (
            "Fed with the token ids (input_ids): attention_mask = 1 for every token; "
            "position_ids = 0 … T−1; an empty past (4 inputs such as past_key_values.0.key, "
            "length 0)."
        ) in notes
        assert "Outputs besides the logits (logits) are not used: present.0.key" in notes
        assert_like_transformers(uploaded, model, sentence_ids(64))
    finally:
        uploaded.close()


@pytest.mark.slow
def test_a_long_context_is_analysed_up_to_what_fits(tmp_path):
    """32 heads at GPT-2's 1,024 positions: the logits and both attention maps at 1,024
    tokens exceed the limit, so the app analyses up to the largest T that fits."""
    model = hf_gpt2(n_positions=1024, n_head=32, n_embd=64)
    path = export(model, Export(dynamo=False, mask=False), tmp_path)
    shown = ["logits", "attn", "masked_scores"]
    cfg = ModelConfig(**_config_fields(V, 2, 32, 1024))
    fits = longest_context(cfg, MAX_ACTIVATION_ELEMENTS, shown)
    assert 500 < fits < 1024
    assert activation_elements(cfg, fits + 1, shown) > MAX_ACTIVATION_ELEMENTS
    uploaded = upload(path)
    try:
        assert uploaded.config.context_length == fits
        assert f"Analysed up to {fits} tokens: the most whose logits and attention" in " ".join(
            uploaded.card.notes
        )
        ids = sentence_ids(12)
        out = uploaded.inspect(ids)
        np.testing.assert_allclose(out["attn"], reference(model, ids)[1], rtol=1e-4, atol=1e-9)
    finally:
        uploaded.close()
    fixed = export(model, Export(dynamo=False, mask=True, fixed_T=800), tmp_path)
    uploaded = upload(fixed)  # a fixed 800 tokens: run padded, analysed up to what fits
    try:
        assert uploaded.config.context_length == fits
        notes = " ".join(uploaded.card.notes)
        assert f"Analysed up to {fits} of the graph's fixed 800 tokens" in notes
        out = uploaded.inspect(ids)
        np.testing.assert_allclose(out["attn"], reference(model, ids)[1], rtol=1e-4, atol=1e-9)
    finally:
        uploaded.close()


def test_padding_that_changes_the_result_is_said_in_one_line():
    """A graph without a causal mask and without an attention_mask input, fixed at 12
    tokens: the sentence's numbers depend on the padding, and the card says so."""
    model = tiny_lm(len(STOI), "bidirectional", seed=7)
    graph = export_tiny(model, dynamo=False, fixed_T=12)
    uploaded = load_upload({"model.onnx": graph, "tokenizer.json": char_tokenizer_json()})
    try:
        lines = [n for n in uploaded.card.notes if n.startswith("Padding changes the result")]
        assert lines == [
            "Padding changes the result: the graph takes a fixed 12 tokens and has no "
            "attention mask input, so a shorter sentence's numbers depend on the id 0 ('\\n') "
            "padding after it."
        ]
        assert uploaded.inspect([STOI[c] for c in "Speak"])["attn"].shape == (2, 4, 5, 5)
    finally:
        uploaded.close()


def _uploads_like_transformers(path, model) -> None:
    """Upload the export at ``path``: 2 layers of 4 heads, attention as ``model``'s."""
    uploaded = upload(path)
    try:
        assert (uploaded.config.n_layer, uploaded.config.n_head) == (2, 4)
        assert_like_transformers(uploaded, model, sentence_ids(64))
    finally:
        uploaded.close()


@pytest.mark.slow  # two dynamo exports of a random Llama: about 10 s
@pytest.mark.parametrize("mask", [False, True])
def test_a_llama_exported_by_dynamo_at_opset_23_shows_transformers_own_attention(mask, tmp_path):
    """#44 item 23: the dynamo exporter at opset 23 writes RMSNorm and the rotary positions
    as ONNX's RMSNormalization and RotaryEmbedding (and SDPA as Attention); the upload was
    refused for them. Allowed, it shows transformers' attention; opset 24 needs neither."""
    model = small_causal_lm("llama")
    path = export(model, Export(dynamo=True, mask=mask, opset=23), tmp_path)
    used = set(operators(path))
    assert OPSET_23_OPS <= used and used <= ALLOWED_OPS, used - ALLOWED_OPS
    _uploads_like_transformers(path, model)
    later = export(model, Export(dynamo=True, mask=mask, opset=24), tmp_path / "24")
    assert set(operators(later)) <= ALLOWED_OPS - OPSET_23_OPS


@pytest.mark.parametrize("family", ["gpt-neo", "llama"])
def test_gpt_neo_and_llama_exports_show_transformers_own_attention(family, tmp_path):
    """TorchScript exports with an attention_mask (what Llama's grouped-query attention
    exports with): no operator beyond the allow-list, attention as transformers'."""
    model = small_causal_lm(family)
    path = export(model, Export(dynamo=False, mask=True), tmp_path)
    assert set(operators(path)) <= ALLOWED_OPS
    _uploads_like_transformers(path, model)


def test_folding_refuses_links_out_wrong_lengths_and_results_over_the_upload_limit(
    hf_exports, tmp_path
):
    """upload.onnx_fold in this process (the command line runs it in the worker)."""
    from upload.onnx_fold import fold_external_data

    source = hf_exports[1][next(h.label for h in SIX if h.external)]
    proto = onnx.load(source, load_external_data=False)
    data = (source.parent / "model.onnx.data").read_bytes()
    (tmp_path / "model.onnx.data").write_bytes(data)
    path = tmp_path / "model.onnx"
    path.write_bytes(proto.SerializeToString())
    assert fold_external_data(path)  # a copy of the data beside the graph: fine
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "model.onnx").write_bytes(proto.SerializeToString())
    (linked / "model.onnx.data").symlink_to(source.parent / "model.onnx.data")
    with pytest.raises(ValueError, match="'model.onnx.data', which is not a file in"):
        fold_external_data(linked / "model.onnx")  # a link leading out of the folder
    first = proto.graph.initializer[0]
    length = next(e for e in first.external_data if e.key == "length")
    length.value = str(int(length.value) + 4)
    path.write_bytes(proto.SerializeToString())
    with pytest.raises(ValueError, match=f"tensor '{first.name}' asks for bytes .* its dims need"):
        fold_external_data(path)
    length.value = str(int(length.value) - 4)
    first.dims[:] = [16_000_000]  # 64 MB declared: refused before a byte is read
    path.write_bytes(proto.SerializeToString())
    with pytest.raises(ValueError, match=r"model.onnx with its weights folded in: too large"):
        fold_external_data(path)
