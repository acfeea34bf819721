"""Foreign ONNX language models: plain torch models exported with ``torch.onnx.export``
(no extra outputs, no metadata), uploaded with their tokenizer through
``upload.load.load_upload``: the real worker finds their attention, and what it returns
equals the torch model's own numbers. Nothing is mocked."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper
from tokenizers import Tokenizer

from tests.helpers import hostile_onnx
from tests.helpers.foreign_lm import char_tokenizer_json, export, reference, tiny_lm
from tests.helpers.gpt2_tokenizer import gpt2_style_tokenizer
from tests.helpers.nanogpt_layout import STOI, meta_bytes
from upload.client import Worker
from upload.convert import main
from upload.load import load_upload
from upload.onnx_foreign import SOURCE, UNKNOWN

V = len(STOI)
TEXT = "Before we proceed"  # 17 characters: longer than the context (16)


def refused(match: str):
    return pytest.raises(ValueError, match=match)


def char_ids(text: str) -> list[int]:
    return [STOI[c] for c in text]


@pytest.fixture(scope="module")
def exports() -> dict:
    """(kind, exporter) -> (torch model, graph bytes); kind softmax (F.softmax over masked
    scores) or sdpa (scaled_dot_product_attention, is_causal=True); exporter dynamo
    (torch's default) or torchscript (dynamo=False)."""
    out = {}
    for kind in ("softmax", "sdpa"):
        model = tiny_lm(V, kind, seed=1)
        for exporter in ("dynamo", "torchscript"):
            out[kind, exporter] = model, export(model, dynamo=exporter == "dynamo")
    return out


def check_against_torch(uploaded, model, ids: list[int], scores: bool = True) -> None:
    """logits and attention within 1e-5 of torch; the Softmax input where torch masks."""
    out = uploaded.inspect(ids)
    logits, attn = reference(model, ids)  # (1, T, V), (L, H, T, T)
    assert out["logits"].shape == logits.shape and out["attn"].shape == attn.shape
    np.testing.assert_allclose(out["logits"], logits, atol=1e-5, rtol=0)
    np.testing.assert_allclose(out["attn"], attn, atol=1e-5, rtol=0)
    assert ("masked_scores" in out) == scores
    if scores:
        blocked = np.triu(np.ones((len(ids), len(ids)), bool), 1)  # key j > query i
        masked = out["masked_scores"]  # (L, H, T, T)
        assert (masked[..., blocked] < -1e30).all()  # -inf (F.softmax) or -3.4e38 (SDPA)
        assert np.isfinite(masked[..., ~blocked]).all()


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["softmax", "sdpa"])
@pytest.mark.parametrize("exporter", ["dynamo", "torchscript"])
def test_a_torch_export_shows_the_torch_model_s_own_attention(exports, kind, exporter):
    model, graph = exports[kind, exporter]
    uploaded = load_upload({"model.onnx": graph, "tokenizer.json": char_tokenizer_json()})
    try:
        cfg = uploaded.config
        assert (cfg.n_layer, cfg.n_head, cfg.vocab_size) == (2, 4, V)
        assert cfg.context_length == 16  # wpe has 16 rows: it fails at 17 tokens
        assert set(cfg.unknown) == set(UNKNOWN) and uploaded.card.source == SOURCE
        assert uploaded.card.config["d_model"] == "unknown"  # never a made-up number
        assert uploaded.card.notes[0].startswith("2 attention layers found (softmaxes")
        assert "the longest input it runs at" in uploaded.card.notes[1]
        check_against_torch(uploaded, model, char_ids(TEXT[:16]))
        check_against_torch(uploaded, model, char_ids("Be"))
        np.testing.assert_allclose(
            uploaded.logits(char_ids("Before")), reference(model, char_ids("Before"))[0][0],
            atol=1e-5, rtol=0,
        )  # fmt: skip
        new, probs = uploaded.generate(char_ids("Before"), 3)
        assert len(new) == 3 and all(0 < p <= 1 for p in probs)
    finally:
        uploaded.close()


def test_a_gpt2_style_tokenizer_and_a_fixed_length(tmp_path):
    tokenizer_json = gpt2_style_tokenizer(300)
    model = tiny_lm(300, "sdpa", seed=2, T=32)
    graph = export(model, dynamo=False, fixed_T=12)
    uploaded = load_upload({"lm.onnx": graph, "tokenizer.json": tokenizer_json.encode()})
    try:
        assert uploaded.config.context_length == 12 and uploaded.config.vocab_size == 300
        assert "the input's token axis is fixed" in uploaded.card.notes[1]
        ids = (
            Tokenizer.from_str(tokenizer_json)
            .encode("Before we proceed any further, the cat sat on the log.")
            .ids
        )
        assert len(ids) >= 12
        check_against_torch(uploaded, model, ids[:12])
        with refused("longer than the context length 12"):
            uploaded.inspect(ids[:13])
    finally:
        uploaded.close()


@pytest.mark.slow  # over 4 s in a full fast run (5-8 s; 9-19 s beside two busy loops)
def test_onnx_attention_operator_gives_its_probabilities(tmp_path):
    """From opset 23 the dynamo exporter writes SDPA as ONNX's Attention operator: the
    worker asks it for its softmax output (qk_matmul_output_mode 3)."""
    model = tiny_lm(V, "sdpa", seed=3)
    graph = export(model, opset=23)
    assert "Attention" in {n.op_type for n in onnx.load_from_string(graph).graph.node}
    path, meta = tmp_path / "model.onnx", tmp_path / "meta.pkl"
    path.write_bytes(graph)
    meta.write_bytes(meta_bytes())
    uploaded = load_upload({"model.onnx": graph, "meta.pkl": meta_bytes()})
    try:
        check_against_torch(uploaded, model, char_ids("Speak, speak."), scores=False)
        assert "ONNX Attention operators" in uploaded.card.notes[0]
    finally:
        uploaded.close()


def test_the_cli_prints_the_card_or_one_line(tmp_path, capsys):
    model = tiny_lm(V, "softmax", seed=4)
    graph, tokenizer = tmp_path / "model.onnx", tmp_path / "tokenizer.json"
    graph.write_bytes(export(model, dynamo=False))
    tokenizer.write_bytes(char_tokenizer_json())
    main([str(graph), "--tokenizer", str(tokenizer)])
    out = capsys.readouterr().out
    assert "source: ONNX (foreign)" in out and "d_model: unknown" in out
    assert "n_head: 4" in out and "note: 2 attention layers found" in out
    assert "attn_eps: unknown" in out and "1e-06" not in out  # #44 item 24: never given
    with pytest.raises(SystemExit) as stop:
        main([str(graph)])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("refused: model.onnx: has no 'config' metadata") and "\n" not in err
    assert "tokenizer.json" in err


def test_a_graph_without_attention_is_refused_with_what_was_looked_for():
    graph = export(tiny_lm(V, "none"), dynamo=False)
    with refused(
        r"^model.onnx: no attention found: looked for Softmax nodes whose output is "
        r"\(…, T, T\) over the key axis \(and ONNX Attention operators\); found 0 "
        r"\(2 Softmax node\(s\) of other shapes, e.g. \(1, 3, 32\)\)$"
    ):
        load_upload({"model.onnx": graph, "tokenizer.json": char_tokenizer_json()})


def test_bad_companions_are_refused_in_one_line(exports):
    _, graph = exports["softmax", "torchscript"]
    with refused(
        r"the tokenizer has 300 tokens \(largest id 299\) but the model has 30 token rows"
    ):
        load_upload({"model.onnx": graph, "tokenizer.json": gpt2_style_tokenizer(300).encode()})
    with refused("upload one tokenizer.json"):
        load_upload({"m.onnx": graph, "a.json": char_tokenizer_json(), "meta.pkl": meta_bytes()})
    with refused("tokenizer.json: the tokenizer is not valid JSON"):
        load_upload({"model.onnx": graph, "tokenizer.json": b"{ not json"})
    for value, message in [
        ((onnx.TensorProto.FLOAT, [1, 3]), r"its input 'x' \(float32\) is not one the app can feed"),
        ((onnx.TensorProto.INT64, [1, 3]), r"needed one integer input of token ids, .*found 2 \(idx, x\)"),
        ((onnx.TensorProto.INT64, [2, 3]), r"its input 'x_mask' has a fixed batch of 2"),
    ]:  # fmt: skip
        two = onnx.load_from_string(graph)
        name = "x_mask" if value[1][0] == 2 else "x"
        two.graph.input.append(helper.make_tensor_value_info(name, *value))
        with refused(f"^model.onnx: {message}"):
            load_upload(
                {"model.onnx": two.SerializeToString(), "tokenizer.json": char_tokenizer_json()}
            )
    masked = onnx.load_from_string(graph)  # a mask of a fixed 3 tokens, ids of any length
    masked.graph.input.append(
        helper.make_tensor_value_info("attention_mask", onnx.TensorProto.INT64, [1, 3])
    )
    uploaded = load_upload(
        {"model.onnx": masked.SerializeToString(), "tokenizer.json": char_tokenizer_json()}
    )
    try:  # the graph runs at its mask's fixed length: a 2-token sentence is padded to 3
        assert uploaded.config.context_length == 3
        assert uploaded.inspect(char_ids("Be"))["attn"].shape == (2, 4, 2, 2)
    finally:
        uploaded.close()


def test_a_hostile_foreign_graph_stays_contained(exports):
    """A graph that fails on one token costs that sentence one line; one that stalls
    costs the upload one line; the worker's limits hold for foreign graphs too."""
    proto = onnx.load_from_string(exports["softmax", "dynamo"][1])
    bad_id = STOI["z"]
    bad = hostile_onnx.rewire_output(
        proto, "logits", hostile_onnx.fails_on_token(bad_id, input_name="idx")
    )
    files = {"model.onnx": bad.SerializeToString(), "tokenizer.json": char_tokenizer_json()}
    uploaded = load_upload(files)
    try:
        with pytest.raises(RuntimeError, match=r"^Reshape: "):
            uploaded.inspect(char_ids("zap"))
        assert uploaded.inspect(char_ids("Speak"))["attn"].shape == (2, 4, 5, 5)
    finally:
        uploaded.close()
    slow = hostile_onnx.rewire_output(proto, "logits", hostile_onnx.slow())
    worker = Worker("slow.onnx + tokenizer.json")
    blobs = {"slow.onnx": slow.SerializeToString(), "tokenizer.json": char_tokenizer_json()}
    with pytest.raises(ValueError, match=r"^slow.onnx \+ tokenizer.json: stopped: "):
        worker.request({"op": "open"}, 3, blobs=blobs)
    assert not worker.alive


def foreign_upload(proto: onnx.ModelProto):
    return load_upload(
        {"model.onnx": proto.SerializeToString(), "tokenizer.json": char_tokenizer_json()}
    )


def test_gather_nd_cannot_reach_past_its_table_or_the_worker_s_memory(exports):
    """GatherND (Hugging Face's padding mask, dynamo exporter): indices picked by the token
    ids fail that sentence only, out of range; indices that ask for gigabytes are refused
    by the fenced worker."""
    proto = onnx.load_from_string(exports["softmax", "torchscript"][1])
    rows = STOI["z"]  # every character of "Speak" has a smaller id
    table = hostile_onnx.gather_nd_by_token(rows, input_name="idx")
    uploaded = foreign_upload(hostile_onnx.rewire_output(proto, "logits", table))
    try:
        with pytest.raises(RuntimeError, match=r"^GatherND"):
            uploaded.inspect(char_ids("zap"))
        assert uploaded.inspect(char_ids("Speak"))["attn"].shape == (2, 4, 5, 5)
    finally:
        uploaded.close()
    huge = hostile_onnx.rewire_output(proto, "logits", hostile_onnx.gather_nd_huge([1024, 1024]))
    with refused(r"^model.onnx \+ tokenizer.json: it needed more memory than an upload may"):
        foreign_upload(huge)


def test_isnan_can_neither_size_a_tensor_by_value_nor_smuggle_nan_in(exports):
    """IsNaN (the masks' NaN guard of both exporters): its output follows the input's
    values, so a size computed from it is refused statically; NaN it lets through is
    refused by the trial run."""
    proto = onnx.load_from_string(exports["softmax", "torchscript"][1])
    sized = hostile_onnx.rewire_output(proto, "logits", hostile_onnx.size_through_isnan("idx"))
    with refused("refused: the size of the ConstantOfShape output 'h_big' depends on the values"):
        foreign_upload(sized)
    poisoned = hostile_onnx.rewire_output(proto, "logits", hostile_onnx.nan_where_isnan("idx"))
    with refused("^model.onnx: refused: its logits contain NaN or inf on a test input"):
        foreign_upload(poisoned)
