"""The translation models' ONNX graphs equal PyTorch: logits and every attention output,
and the step graphs (cached encoder keys/values) equal full decoding."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
import torch

from export.seq2seq import INSPECT_OUTPUTS, load_seq2seq
from inference.seq2seq import decode, inspect, load_translator

SRC = "some old kings liked the red lamps near the park .".split()
GOLD = "puro haki lo ga kinu ve le kemu revo ve wo holu .".split()


@pytest.fixture(scope="module")
def tiny(tiny_seq2seq):
    return tiny_seq2seq


def _ids(vocab, words, bos=False):
    v = vocab.get_vocab()
    return torch.tensor([([1] if bos else []) + [v[w] for w in words] + ([] if bos else [2])])


@pytest.mark.parametrize("kind", ["gru", "bahdanau"])
def test_rnn_step_graph_rolled_equals_pytorch_teacher_forcing(tiny, kind):
    folder, models = tiny
    model, (src_vocab, tgt_vocab) = models[kind]
    src, tgt_in = _ids(src_vocab, SRC), _ids(tgt_vocab, GOLD, bos=True)  # (1, S), (1, T+1)
    with torch.no_grad():
        logits, cache = model(src, tgt_in, inspect=True)  # (1, T+1, V)
    run = decode(load_translator(folder, kind), SRC, gold=GOLD, teacher=True)
    assert [s.fed for s in run.steps] == ["<bos>", *GOLD]
    with torch.no_grad():
        first_query = model.encoder(src)[1][-1, 0].numpy()  # s_0: the encoder's last state
    assert np.abs(run.steps[0].query - first_query).max() <= 1e-5
    attn = run.attention()  # (T + 1, S)
    assert np.abs(attn - cache["cross_attn"][0].numpy()).max() <= 1e-5
    ctx = np.stack([s.context for s in run.steps])  # (T + 1, d)
    assert np.abs(ctx - cache["context"][0].numpy()).max() <= 1e-5
    probs = torch.softmax(logits[0], -1).numpy()  # (T + 1, V)
    picked = [tgt_vocab.get_vocab()[s.word] for s in run.steps]
    assert picked == probs.argmax(-1).tolist()
    assert np.allclose([s.prob for s in run.steps], probs.max(-1), atol=1e-5)
    if kind == "bahdanau":
        assert np.allclose(attn.sum(-1), 1.0, atol=1e-5)
    else:
        assert not attn.any()  # no attention: the same fixed context at every step
        assert np.array_equal(ctx[0], ctx[-1])


def test_transformer_inspect_graph_equals_pytorch(tiny):
    folder, models = tiny
    model, (src_vocab, tgt_vocab) = models["transformer"]
    src, tgt_in = _ids(src_vocab, SRC), _ids(tgt_vocab, GOLD, bos=True)
    with torch.no_grad():
        logits, cache = model(src, tgt_in, inspect=True)
    got = inspect(load_translator(folder, "transformer"), SRC, GOLD)
    assert set(got) == set(INSPECT_OUTPUTS)
    assert np.abs(got["logits"] - logits.numpy()).max() <= 1e-5
    for name in INSPECT_OUTPUTS[1:]:
        assert np.abs(got[name] - cache[name].numpy()).max() <= 1e-5, name
    S, T = src.shape[1], tgt_in.shape[1]
    assert got["cross_attn"].shape == (1, 2, T, S) and got["enc_self_attn"].shape == (1, 2, S, S)
    assert np.allclose(got["cross_attn"].sum(-1), 1.0, atol=1e-5)
    assert not np.triu(got["dec_self_attn"], 1).any()  # zeros above the diagonal


def test_transformer_step_graph_with_cached_keys_values_equals_full_decoding(tiny):
    folder, models = tiny
    translator = load_translator(folder, "transformer")
    run = decode(translator, SRC, gold=GOLD, teacher=True)
    full = inspect(translator, SRC, GOLD)  # one run over <bos> + the whole gold target
    logits = full["logits"][0]  # (T + 1, V)
    assert [translator.tgt_tokenizer.get_vocab()[s.word] for s in run.steps] == logits.argmax(
        -1
    ).tolist()
    steps = run.attention()  # (L, H, T + 1, S): the step graph's last row, step by step
    assert np.abs(steps - full["cross_attn"]).max() <= 1e-5
    queries = np.stack([s.query for s in run.steps], 2)  # (L, H, T + 1, d_head)
    assert np.abs(queries - full["cross_q"]).max() <= 1e-5


def test_graphs_are_self_contained_with_symbolic_axes(tiny):
    folder, _ = tiny
    for path in folder.glob("*.onnx"):
        graph = onnx.load(str(path))
        onnx.checker.check_model(graph, full_check=True)
        meta = {p.key for p in graph.metadata_props}
        assert {"config", "src_tokenizer", "tgt_tokenizer"} <= meta, path.name
        dims = [d for i in graph.graph.input for d in i.type.tensor_type.shape.dim]
        assert any(d.dim_param for d in dims), path.name  # a sequence axis stays symbolic
    assert not list(folder.glob("*.data"))


def test_checkpoints_round_trip(tiny):
    folder, models = tiny
    for kind, (model, _) in models.items():
        loaded, vocabs, record = load_seq2seq(folder / f"seq2seq_{kind}.safetensors")
        assert loaded.cfg == model.cfg and record == {"steps": 0}
        for (k, a), b in zip(model.state_dict().items(), loaded.state_dict().values(), strict=True):
            assert torch.equal(a, b), k


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["gru", "bahdanau", "transformer"])
def test_shipped_graphs_equal_their_pytorch_checkpoints(kind):
    """The trained models as shipped: ONNX (what the app runs) == PyTorch (the checkpoint)
    on a held-out sentence longer than any in training, teacher forced."""
    from corpus.translation import splits
    from tests.helpers import EXPORTED

    pair = splits(n_heldout=5).longer[0]
    model, (src_vocab, tgt_vocab), record = load_seq2seq(EXPORTED / f"seq2seq_{kind}.safetensors")
    assert record["steps"] > 0
    src = _ids(src_vocab, list(pair.source))
    tgt_in = _ids(tgt_vocab, list(pair.target), bos=True)
    with torch.no_grad():
        logits, cache = model(src, tgt_in, inspect=True)  # (1, T + 1, V)
    run = decode(load_translator(EXPORTED, kind), list(pair.source), gold=list(pair.target),
                 teacher=True)  # fmt: skip
    probs = torch.softmax(logits[0], -1).numpy()
    assert np.allclose([s.prob for s in run.steps], probs.max(-1), atol=1e-5)
    attn = run.attention()
    want = cache["cross_attn"][0] if kind != "transformer" else cache["cross_attn"]
    assert np.abs(attn - want.numpy()).max() <= 1e-5
