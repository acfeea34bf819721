"""The key/value-cache decoding graph (``export/kv_cache.py``) run by
``inference.decode.OnnxKVDecoder`` equals recomputing the whole prefix."""

import dataclasses

import numpy as np
import onnx
import pytest
import torch

from export.graphs import export_model
from export.kv_cache import export_kv_cache
from inference.decode import OnnxKVDecoder
from inference.runtime import load_shipped
from models.transformer import Transformer


@pytest.mark.slow
@pytest.mark.parametrize("scale_embedding", [False, True])
def test_kv_cache_graph_equals_full_recomputation(tiny_exports, tmp_path, scale_embedding):
    model, folder = tiny_exports["softmax"]
    if scale_embedding != model.cfg.scale_embedding:  # same weights, the other embedding rule
        scaled = Transformer(dataclasses.replace(model.cfg, scale_embedding=scale_embedding))
        scaled.load_state_dict(model.state_dict())
        model = scaled.eval()
        export_model(model, tmp_path / "graphs", load_shipped(folder, "softmax").tokenizer)
        folder = tmp_path / "graphs"
    cfg = model.cfg
    path = export_kv_cache(model, tmp_path)
    graph = onnx.load(str(path))
    past_k = next(i for i in graph.graph.input if i.name == "past_k")
    assert past_k.type.tensor_type.shape.dim[2].dim_param  # P stayed symbolic
    decoder = OnnxKVDecoder(path, cfg.n_layer, cfg.n_head, cfg.d_head)
    ids = [int(i) for i in np.random.default_rng(0).integers(0, cfg.vocab_size, 20)]
    k, v = decoder.empty()
    step_logits = []
    for i, token in enumerate(ids):  # 20 tokens: past the 16-token context, sinusoidal is fine
        logits, k, v = decoder.step(token, i, k, v)
        step_logits.append(logits)
    assert k.shape == (cfg.n_layer, cfg.n_head, len(ids), cfg.d_head)
    with torch.inference_mode():
        full = model(torch.tensor([ids]))[0].numpy()  # (T, V)
    np.testing.assert_allclose(np.stack(step_logits), full, atol=1e-4)
    fast = load_shipped(folder, "softmax").fast_session
    graph_full = fast.run(["logits"], {"input_ids": np.array([ids], np.int64)})[0][0]
    np.testing.assert_allclose(np.stack(step_logits), graph_full, atol=1e-4)
