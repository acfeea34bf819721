"""The training history's attention graphs (export/history.py, issue #46): a checkpoint's
float16 graph computes what its torch model computes, and the shipped history's numbers
re-derive from the shipped graphs."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
import torch

from inference import head_stats
from inference.history import HistoryGraph, load_history
from models.config import SHIPPED_KINDS
from models.tokenizer import load_tokenizer
from tests.helpers import EXPORTED
from tests.helpers.export_cache import tiny_model, tiny_tokenizer


def rounded(model):
    """``model`` with its weights rounded to float16 (what ``train --history`` keeps)."""
    state = {k: v.half().float() for k, v in model.state_dict().items()}
    model.load_state_dict(state)
    return model


@pytest.mark.slow
@pytest.mark.parametrize("kind", SHIPPED_KINDS)
def test_a_checkpoint_graph_computes_its_torch_models_attention(kind, tmp_path):
    from export.history import write_history_graphs

    tok = tiny_tokenizer()
    first = rounded(tiny_model(kind, tok))
    torch.manual_seed(1)
    later = rounded(type(first)(first.cfg).eval())
    paths = write_history_graphs({0: first, 7: later}, tmp_path, tok)
    assert [p.name for p in paths] == [f"{kind}.step0.onnx", f"{kind}.step7.onnx"]
    graphs = [onnx.load(str(p)) for p in paths]
    assert {p.key: p.value for p in graphs[1].metadata_props}["step"] == "7"
    params = [i for i in graphs[0].graph.initializer if i.name.endswith(".f16")]
    assert params and all(i.data_type == onnx.TensorProto.FLOAT16 for i in params)
    ids = [int(i) for i in torch.randint(0, first.cfg.vocab_size, (16,))]
    drawn = []
    for model, path in zip((first, later), paths, strict=True):
        for T in (1, 5, 16):  # T is symbolic, up to the context length
            got = HistoryGraph(path).attention(ids[:T])  # (L, H, T, T)
            with torch.no_grad():
                want = model(torch.tensor([ids[:T]]), inspect=True)[1]["attn"].numpy()
            np.testing.assert_allclose(got, want, atol=1e-5)
        drawn.append(got)
    assert np.abs(drawn[0] - drawn[1]).max() > 1e-3  # each graph holds its own weights


@pytest.fixture(scope="module")
def shipped_history():
    return load_history(EXPORTED / "history")


def test_the_shipped_history_has_every_model_and_its_graphs(shipped_history):
    header, models = shipped_history
    assert set(models) == set(SHIPPED_KINDS) and header["phase_threshold"] == 0.4
    steps = {tuple(m.graph_steps) for m in models.values()}
    assert len(steps) == 1  # one slider moves the three
    for m in models.values():
        assert m.steps[0] == 0 and set(m.graph_steps) <= set(m.steps)
        best = m.prefix_matching.max(axis=(1, 2))  # (S,)
        np.testing.assert_allclose(best, m.curves["best_prefix_matching"], atol=1e-4)
        first = next((s for s, b in zip(m.steps, best, strict=True) if b >= 0.4), None)
        assert m.phase_change_step == first
    size = sum(p.stat().st_size for p in (EXPORTED / "history").glob("*.onnx"))
    assert size < 40e6  # what the README says the history costs


@pytest.mark.slow
@pytest.mark.parametrize("kind", SHIPPED_KINDS)
def test_the_shipped_prefix_matching_re_derives_from_the_shipped_graphs(kind, shipped_history):
    """Each graph step's every-head prefix-matching score, measured now through the float16
    graph as the model card measures it, equals the history's (computed in torch)."""
    _, models = shipped_history
    history = models[kind]
    meta = {p.key: p.value for p in onnx.load(str(history.graph_path(0))).metadata_props}
    tok = load_tokenizer(meta["tokenizer"])
    special = {a.content for a in tok.get_added_tokens_decoder().values() if a.special}
    words = head_stats.probe_word_ids(tok.get_vocab(), tok.get_vocab_size(), special)
    for step in (history.graph_steps[0], history.phase_change_step or history.graph_steps[-1]):
        graph = HistoryGraph(history.graph_path(step))
        got = head_stats.induction_probe(graph.attention, words, 64)  # (L, H)
        want = history.prefix_matching[history.steps.index(step)]
        np.testing.assert_allclose(got, want, atol=2e-4)
